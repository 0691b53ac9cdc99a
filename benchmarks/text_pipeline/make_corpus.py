#!/usr/bin/env python
"""Build a realistic, noisy text corpus for the text-cleaning benchmark.

Documents are derived from real text fetched from package registries by
``fetch_testdata.sh`` (Debian fortunes in 4 languages, Debian Reference in
en/de/ja/zh, the Brown corpus, Shakespeare and Milton, Python stdlib sources,
raw DocBook HTML pages). They are cut and combined to a web-like length
distribution, then dirtied with the noise a crawl carries (e-mail addresses,
URLs, IP addresses, HTML fragments, copyright headers, odd whitespace,
mojibake, repeated boilerplate lines, long junk tokens, short junk pages),
and ~5 % exact and ~5 % near duplicates are added. Everything is
deterministic for a given ``--seed``.

Output: ``<out_dir>/corpus_<num_docs>_s<seed>.jsonl`` with one
``{"id", "text", "meta": {source, lang, origin, noise, dup_of, dup_kind, content_length}}``
object per line, plus ``<same stem>.summary.json``.

If the real data cannot be fetched, a clearly-labelled synthetic generator is
used instead (``meta.source == "synthetic"``, ``"synthetic": true`` in the
summary, and a warning on stderr).
"""
from __future__ import annotations

import argparse
import base64
import json
import math
import os
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "data"
DEFAULT_TESTDATA = Path(os.environ.get("DJ_TESTDATA_DIR", Path.home() / ".cache" / "data_juicer_testdata"))
DEFAULT_FETCH = Path(os.environ.get("DJ_TESTDATA_FETCH", "/work/shared/testdata/fetch_testdata.sh"))


def corpus_path(out_dir: Path, num_docs: int, seed: int) -> Path:
    return Path(out_dir) / f"corpus_{num_docs}_s{seed}.jsonl"


# --------------------------------------------------------------------- sources
def ensure_testdata(testdata_dir: Path, fetch_script: Path, profile: str) -> bool:
    """Make sure ``testdata_dir/text/jsonl`` exists; fetch it once if not. Returns success."""
    jsonl_dir = testdata_dir / "text" / "jsonl"
    if (jsonl_dir / "fortunes.jsonl").exists():
        return True
    if not fetch_script.exists():
        print(f"[make_corpus] fetch script not found: {fetch_script}", file=sys.stderr)
        return False
    print(f"[make_corpus] fetching real test data (profile {profile}) into {testdata_dir} ...", file=sys.stderr)
    env = dict(os.environ, TESTDATA_PROFILE=profile, TESTDATA_DERIVE="0", TESTDATA_JSONL="1")
    testdata_dir.mkdir(parents=True, exist_ok=True)
    try:
        subprocess.run(["bash", str(fetch_script), str(testdata_dir)], env=env, check=True)
    except (subprocess.CalledProcessError, OSError) as exc:
        print(f"[make_corpus] fetch failed: {exc}", file=sys.stderr)
        return False
    return (jsonl_dir / "fortunes.jsonl").exists()


def _read_jsonl(path: Path):
    if not path.exists():
        return
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


def load_real_sources(testdata_dir: Path) -> dict:
    j = testdata_dir / "text" / "jsonl"
    fortunes: dict[str, list[tuple[str, str]]] = {}
    for d in _read_jsonl(j / "fortunes.jsonl"):
        t = d["text"].strip("\n")
        if t.strip():
            fortunes.setdefault(d.get("lang", "en"), []).append((d["id"], t))
    prose = []  # (source, lang, origin, lines)
    for name in ("brown-corpus", "shakespeare-milton", "debian-reference"):
        for d in _read_jsonl(j / f"{name}.jsonl"):
            lines = d["text"].split("\n")
            if name == "brown-corpus":
                # one sentence a line: regroup into paragraphs of 2-6 sentences
                r = random.Random(d["id"])
                paras, i = [], 0
                while i < len(lines):
                    k = r.randint(2, 6)
                    paras.append(" ".join(s.strip() for s in lines[i:i + k] if s.strip()))
                    i += k
                lines = [p for p in paras if p]
            prose.append((d.get("source", name), d.get("lang", "en"), d["id"], lines))
    code = [(d["id"], d["text"]) for d in _read_jsonl(j / "code.jsonl")]
    html = []
    hdir = testdata_dir / "text" / "html"
    if hdir.exists():
        for p in sorted(hdir.rglob("*.html")):
            html.append((str(p.relative_to(testdata_dir)), p.read_text(encoding="utf-8", errors="replace")))
    if not fortunes or not prose:
        raise RuntimeError(f"no usable text found under {j}")
    return {"fortunes": fortunes, "prose": prose, "code": code, "html": html, "synthetic": False}


_SYN_WORDS = (  # noqa: SIM905 (a word list reads better as one string)
    "the of and to in a is that for it as was with be by on not he this are or his from at which but have an "
    "they you were her she there one all we their been has would when more will who if no out so said what up "
    "its about into than them can only other new some could time these two may then do first any my now such "
    "like our over man me even most made after also did many before must through back years where much your way "
    "well down should because each just those people how too little state good very make world still own see men "
    "work long get here between both life being under never day same another know while last might us great old "
    "year off come since against go came right used take three system package network server file data process "
    "kernel user memory configuration install update security release version debian archive mirror"
).split()


def make_synthetic_sources(seed: int) -> dict:
    """Labelled fallback: pseudo-English from a fixed word list (NOT realistic; used only if the fetch fails)."""
    r = random.Random(seed)

    def sentence():
        w = [r.choice(_SYN_WORDS) for _ in range(r.randint(5, 22))]
        return " ".join(w).capitalize() + r.choice([".", ".", ".", "?", "!"])

    fortunes = {"en": [(f"synthetic/fortune#{i}", " ".join(sentence() for _ in range(r.randint(1, 4))))
                       for i in range(3000)]}
    prose = [("synthetic", "en", f"synthetic/prose#{i}",
              [" ".join(sentence() for _ in range(r.randint(2, 6))) for _ in range(r.randint(40, 200))])
             for i in range(300)]
    code = [(f"synthetic/code#{i}", "\n".join(f"def f{j}(x):\n    return x * {j}\n" for j in range(60)))
            for i in range(20)]
    html = [(f"synthetic/html#{i}", "<html><body>" + "".join(f"<p>{sentence()}</p>\n" for _ in range(200))
             + "</body></html>") for i in range(20)]
    return {"fortunes": fortunes, "prose": prose, "code": code, "html": html, "synthetic": True}


# ------------------------------------------------------------------- documents
def target_length(r: random.Random) -> int:
    # web-like: log-normal, median ~1.1k chars, long tail, clipped
    return int(min(60000, max(60, math.exp(r.gauss(math.log(1100), 1.0)))))


def doc_fortunes(r, src):
    lang = r.choices(sorted(src["fortunes"]), k=1)[0]
    pool = src["fortunes"][lang]
    k = 1 if r.random() < 0.35 else r.randint(2, 12)
    picks = [pool[r.randrange(len(pool))] for _ in range(k)]
    sep = r.choice(["\n\n", "\n%\n", "\n\n* * *\n\n"])
    return "fortunes", lang, picks[0][0], sep.join(t for _, t in picks)


def doc_prose(r, src, source=None):
    cands = src["prose"] if source is None else [p for p in src["prose"] if p[0] == source] or src["prose"]
    source, lang, origin, lines = cands[r.randrange(len(cands))]
    target = target_length(r)
    i = r.randrange(len(lines))
    out, n = [], 0
    while i < len(lines) and n < target:
        out.append(lines[i])
        n += len(lines[i]) + 1
        i += 1
    text = "\n".join(out).strip("\n")
    if not text.strip():
        text = "\n".join(lines[:20]).strip("\n")
    return source, lang, f"{origin}#L{i - len(out)}", text


def doc_code(r, src):
    origin, text = src["code"][r.randrange(len(src["code"]))]
    lines = text.split("\n")
    target = target_length(r)
    i = r.randrange(max(1, len(lines) - 5))
    out, n = [], 0
    while i < len(lines) and n < target:
        out.append(lines[i])
        n += len(lines[i]) + 1
        i += 1
    return "code", "python", origin, "\n".join(out)


def doc_html(r, src):
    """A raw slice of a real HTML page (tags, attributes, entities), cut at tag boundaries."""
    origin, page = src["html"][r.randrange(len(src["html"]))]
    target = target_length(r) * 2
    start = page.find("<", r.randrange(max(1, len(page) - 200)))
    start = max(0, start)
    end = page.find(">", min(len(page) - 1, start + target))
    end = len(page) if end < 0 else end + 1
    lang = origin.split("/")[-2] if "/" in origin else "en"
    lang = {"zh-cn": "zh-Hans", "zh-tw": "zh-Hant"}.get(lang, lang)
    return "html", lang, origin, page[start:end]


_JUNK = [
    "404 Not Found", "Loading...", "Click here to continue", "Home | About | Contact | Privacy",
    "Subscribe to our newsletter!", "Lorem ipsum dolor sit amet.", "asdfasdf", "test", "null", "N/A",
    "Page 1 of 2", "Accept cookies", "&nbsp;&nbsp;&nbsp;", "=====================", "..........",
    "!!!!!!!!!!!!!!!!!!!!!!", "12345 67890 12345", "😀😀😀😀😀", "\u200b\u200b\u200b", "   ", "Error: 500",
    "Read more >>", "Copyright © 2021", "Share on Facebook Share on Twitter", "ok", "[deleted]",
    "<br><br><br>", "Sign in | Register", "JavaScript is disabled in your browser.", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
]


def doc_junk(r, src):
    k = r.randint(1, 3)
    return "junk", "und", "junk", "\n".join(r.choice(_JUNK) for _ in range(k))


# ------------------------------------------------------------------------ noise
_NAMES = ["john.doe", "maria.garcia", "admin", "info", "support", "j_smith42", "wang.wei", "k.tanaka", "noreply",
          "sales-team", "o.petrov", "hr+jobs", "webmaster", "li.na_1987"]
_DOMAINS = ["example.com", "example.org", "mail.example.net", "company.co.uk", "uni-heidelberg.de", "qq.com",
            "gmail.com", "yandex.ru", "lists.debian.org", "foo-bar.io"]
_URLS = ["https://www.example.com/", "http://example.org/index.php?id={n}&lang=en", "https://t.co/{h}",
         "www.example.net/news/{n}/article.html", "https://github.com/user{n}/repo/blob/main/README.md",
         "ftp://ftp.debian.org/debian/pool/main/", "http://192.168.{a}.{b}:8080/admin/login",
         "https://shop.example.de/produkte?kategorie=schuhe&seite={n}#top", "http://bit.ly/{h}",
         "https://en.wikipedia.org/wiki/Special:Random", "https://cdn.example.com/static/js/app.{h}.js"]


def _email(r):
    return f"{r.choice(_NAMES)}@{r.choice(_DOMAINS)}"


def _url(r):
    return r.choice(_URLS).format(n=r.randint(1, 99999), h=f"{r.getrandbits(32):08x}", a=r.randint(0, 255),
                                  b=r.randint(1, 254))


def _ip(r):
    if r.random() < 0.8:
        return ".".join(str(r.randint(1, 254)) for _ in range(4))
    return ":".join(f"{r.getrandbits(16):x}" for _ in range(8))


def _insert_lines(r, text, new_lines):
    lines = text.split("\n")
    for nl in new_lines:
        lines.insert(r.randint(0, len(lines)), nl)
    return "\n".join(lines)


def _insert_inline(r, text, token):
    words = text.split(" ")
    words.insert(r.randint(0, len(words)), token)
    return " ".join(words)


def noise_email(r, t):
    if r.random() < 0.5:
        return _insert_lines(r, t, [r.choice(["Contact: {}", "E-mail: {}", "Send questions to <{}>.",
                                              "Reply to {} for details", "邮箱：{}"]).format(_email(r))])
    return _insert_inline(r, t, _email(r))


def noise_url(r, t):
    for _ in range(r.randint(1, 3)):
        t = _insert_inline(r, t, r.choice(["{}", "({})", "see {}", "Source: {}", "[{}]"]).format(_url(r)))
    return t


def noise_ip(r, t):
    tmpl = ["Connection from {} port 22", "Accepted publickey for root from {}", "GET /index.html 200 - {}",
            "server: {}", "ping {} failed", "IP: {}"]
    return _insert_lines(r, t, [r.choice(tmpl).format(_ip(r)) for _ in range(r.randint(1, 3))])


def noise_html(r, t):
    paras = t.split("\n")
    mode = r.random()
    if mode < 0.5:
        body = "\n".join(f"<p>{p}</p>" if p.strip() else "<br/>" for p in paras)
        t = (f"<html><head><title>{paras[0][:60]}</title><meta charset=\"utf-8\"></head><body>\n"
             f"<div class=\"nav\"><a href=\"/\">Home</a> | <a href=\"/about\">About</a></div>\n{body}\n"
             f"<footer>&copy; 2020 Example &amp; Co.</footer></body></html>")
    elif mode < 0.8:
        t = _insert_lines(r, t, [r.choice(["<div class=\"ad\"><img src=\"/ads/banner.gif\" alt=\"Ad\"></div>",
                                           "<script>var x = 1; console.log(x);</script>",
                                           "<!-- generated by WordPress 5.8 -->", "<span>&nbsp;</span>",
                                           "<b>Note:</b> fish &amp; chips &lt;3 &#8364;5",
                                           "<table><tr><td>1</td><td>2</td></tr></table>"])
                                 for _ in range(r.randint(1, 4))])
    else:
        t = t.replace("\n", "<br>\n", r.randint(1, 20))
    return t


_COPYRIGHT = [
    "Copyright (c) {y} Example Corp. All rights reserved.",
    "/*\n * Copyright (C) {y} The Example Authors\n * Licensed under the Apache License, Version 2.0\n */",
    "# Copyright {y} Free Software Foundation, Inc.\n# This file is free software; see COPYING.",
    "// Copyright {y} Example LLC\n// SPDX-License-Identifier: MIT",
    "© {y} Example Media GmbH – Alle Rechte vorbehalten.",
    "版权所有 © {y} 示例公司 保留所有权利",
]


def noise_copyright(r, t):
    header = r.choice(_COPYRIGHT).format(y=r.randint(1995, 2024))
    return header + "\n" + t if r.random() < 0.8 else t + "\n" + header


_WS = ["\u00a0", "\u2009", "\u3000", "\u200b", "\t", "  ", "   ", "\u2002", "\u202f", "\x0b", "\u2028", "\ufeff"]


def noise_whitespace(r, t):
    chars = list(t)
    for _ in range(max(1, len(chars) // 200)):
        i = r.randrange(len(chars) + 1)
        chars.insert(i, r.choice(_WS))
    t = "".join(chars)
    if r.random() < 0.3:
        t = t.replace("\n", "\r\n")
    if r.random() < 0.3:
        t = "  " + t + "  \n\n\n"
    if r.random() < 0.3:
        t = t.replace("\n", "\n\n\n", r.randint(1, 5))
    return t


def noise_mojibake(r, t):
    # classic double-encoding of a span: UTF-8 bytes read as cp1252 / latin-1
    n = len(t)
    a = r.randrange(max(1, n))
    b = min(n, a + r.randint(50, 2000))
    span = t[a:b]
    enc = r.choice(["cp1252", "latin-1"])
    bad = span.encode("utf-8").decode(enc, errors="replace")
    if bad == span:  # pure ASCII span: add some typical broken punctuation
        bad = span + " â€œquotedâ€\x9d â€“ donâ€™t"
    return t[:a] + bad + t[b:]


_BOILER = ["Share this article", "Advertisement", "Read more", "Click to expand...", "Reply", "Quote",
           "Sponsored content", "Follow us on Twitter", "cookie settings", "Back to top"]


def noise_repeated_lines(r, t):
    lines = t.split("\n")
    short = [ln for ln in lines if 0 < len(ln) <= 200]
    line = r.choice(_BOILER) if r.random() < 0.5 or not short else r.choice(short)
    k = r.randint(3, 30)
    pos = r.randint(0, len(lines))
    return "\n".join(lines[:pos] + [line] * k + lines[pos:])


def noise_long_words(r, t):
    blobs = []
    for _ in range(r.randint(1, 3)):
        kind = r.random()
        if kind < 0.4:
            blobs.append(base64.b64encode(r.randbytes(r.randint(40, 400))).decode())
        elif kind < 0.7:
            blobs.append(f"{r.getrandbits(256):064x}")
        else:
            blobs.append("".join(r.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(r.randint(30, 120))))
    for b in blobs:
        t = _insert_inline(r, t, b)
    return t


_PUNCT = [("\"", "“"), ("\"", "”"), ("'", "’"), ("...", "…"), (" - ", " — "), (",", "，"), (".", "。"),
          ("!", "！"), ("?", "？"), (":", "："), (";", "；"), ("(", "（"), (")", "）")]


def noise_punctuation(r, t):
    for a, b in r.sample(_PUNCT, r.randint(1, 5)):
        t = t.replace(a, b, r.randint(1, 10))
    return t


def noise_control(r, t):
    ctl = r.choice(["\x1b[31m", "\x1b[0m", "\x00", "\x07", "\ufffd", "\x1b[1;32m"])
    return _insert_inline(r, t, ctl)


NOISES = [  # name, probability, fn
    ("email", 0.10, noise_email),
    ("url", 0.18, noise_url),
    ("ip", 0.05, noise_ip),
    ("html", 0.07, noise_html),
    ("copyright", 0.05, noise_copyright),
    ("whitespace", 0.12, noise_whitespace),
    ("mojibake", 0.04, noise_mojibake),
    ("repeated_lines", 0.05, noise_repeated_lines),
    ("long_words", 0.04, noise_long_words),
    ("punctuation", 0.08, noise_punctuation),
    ("control", 0.02, noise_control),
]

KINDS = [  # builder, weight
    (doc_fortunes, 0.30),
    (lambda r, s: doc_prose(r, s, "brown-corpus"), 0.17),
    (lambda r, s: doc_prose(r, s, "shakespeare"), 0.10),
    (lambda r, s: doc_prose(r, s, "milton"), 0.02),
    (lambda r, s: doc_prose(r, s, "debian-reference"), 0.20),
    (doc_code, 0.06),
    (doc_html, 0.07),
    (doc_junk, 0.08),
]


# ------------------------------------------------------------------ duplicates
def near_duplicate(r, text):
    """Small edit(s) of the kind re-posts and scraped mirrors carry."""
    ops = r.sample(["typo", "footer", "header", "drop_line", "spaces", "case"], r.randint(1, 2))
    for op in ops:
        if op == "typo":
            words = text.split(" ")
            for _ in range(max(1, len(words) // 100)):
                i = r.randrange(len(words))
                w = words[i]
                if len(w) > 3:
                    j = r.randrange(len(w) - 1)
                    words[i] = w[:j] + w[j + 1] + w[j] + w[j + 2:]
            text = " ".join(words)
        elif op == "footer":
            text = text + "\n" + r.choice(["Posted by admin", "Share this: Facebook | Twitter", "(via Reddit)",
                                           "Last updated: 2021-03-04", "-- end of message --"])
        elif op == "header":
            text = r.choice(["Re: ", "Fwd: ", "[repost] ", "UPDATE: "]) + text
        elif op == "drop_line":
            lines = text.split("\n")
            if len(lines) > 4:
                del lines[r.randrange(len(lines))]
            text = "\n".join(lines)
        elif op == "spaces":
            text = text.replace(". ", ".  ", r.randint(1, 5))
        elif op == "case":
            words = text.split(" ")
            i = r.randrange(len(words))
            words[i] = words[i].upper()
            text = " ".join(words)
    return text


def build(num_docs: int, seed: int, src: dict, dup_rate: float = 0.05, near_rate: float = 0.05):
    r = random.Random(seed)
    n_exact = int(num_docs * dup_rate)
    n_near = int(num_docs * near_rate)
    n_base = num_docs - n_exact - n_near
    builders = [k for k, _ in KINDS]
    weights = [w for _, w in KINDS]
    if src["synthetic"]:
        builders = [doc_fortunes, doc_prose, doc_code, doc_html, doc_junk]
        weights = [0.3, 0.47, 0.06, 0.07, 0.1]
    docs = []
    for _ in range(n_base):
        source, lang, origin, text = r.choices(builders, weights)[0](r, src)
        noise = []
        for name, p, fn in NOISES:
            if r.random() < p and text:
                text = fn(r, text)
                noise.append(name)
        docs.append({"text": text, "meta": {"source": "synthetic" if src["synthetic"] else source, "lang": lang,
                                            "origin": origin, "noise": ",".join(noise), "dup_of": -1,
                                            "dup_kind": ""}})
    for _ in range(n_exact):
        i = r.randrange(n_base)
        d = docs[i]
        docs.append({"text": d["text"], "meta": dict(d["meta"], dup_of=i, dup_kind="exact")})
    long_enough = [i for i in range(n_base) if len(docs[i]["text"]) >= 300]
    for _ in range(n_near):
        i = r.choice(long_enough)
        d = docs[i]
        docs.append({"text": near_duplicate(r, d["text"]), "meta": dict(d["meta"], dup_of=i, dup_kind="near")})
    order = list(range(len(docs)))
    r.shuffle(order)
    new_id = {old: f"doc-{pos:07d}" for pos, old in enumerate(order)}
    out = []
    for old in order:
        d = docs[old]
        m = d["meta"]
        m["dup_of"] = new_id[m["dup_of"]] if m["dup_of"] >= 0 else ""
        m["content_length"] = len(d["text"])  # numeric crawl metadata (for field filters/selectors)
        out.append({"id": new_id[old], "text": d["text"], "meta": m})
    return out


def make_corpus(num_docs: int = 50000, seed: int = 42, out_dir: Path = DEFAULT_OUT,
                testdata_dir: Path = DEFAULT_TESTDATA, fetch_script: Path = DEFAULT_FETCH,
                profile: str = "tiny", force: bool = False) -> Path:
    out = corpus_path(out_dir, num_docs, seed)
    if out.exists() and not force:
        print(f"[make_corpus] reusing {out}", file=sys.stderr)
        return out
    if ensure_testdata(Path(testdata_dir), Path(fetch_script), profile):
        src = load_real_sources(Path(testdata_dir))
    else:
        print("[make_corpus] WARNING: real test data unavailable -> using the SYNTHETIC fallback generator "
              "(pseudo-English word salad; benchmark figures are not representative)", file=sys.stderr)
        src = make_synthetic_sources(seed)
    docs = build(num_docs, seed, src)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".jsonl.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.writelines(json.dumps(d, ensure_ascii=False) + "\n" for d in docs)
    os.replace(tmp, out)
    lens = sorted(len(d["text"]) for d in docs)
    summary = {
        "path": str(out), "num_docs": len(docs), "seed": seed, "synthetic": src["synthetic"],
        "testdata_dir": None if src["synthetic"] else str(testdata_dir),
        "bytes": out.stat().st_size, "chars_total": sum(lens),
        "chars_p10_p50_p90_max": [lens[len(lens) // 10], lens[len(lens) // 2], lens[9 * len(lens) // 10], lens[-1]],
        "sources": dict(Counter(d["meta"]["source"] for d in docs).most_common()),
        "langs": dict(Counter(d["meta"]["lang"] for d in docs).most_common()),
        "noise": dict(Counter(n for d in docs for n in d["meta"]["noise"].split(",") if n).most_common()),
        "duplicates": dict(Counter(d["meta"]["dup_kind"] for d in docs if d["meta"]["dup_kind"])),
    }
    out.with_suffix(".summary.json").write_text(json.dumps(summary, indent=1, ensure_ascii=False) + "\n")
    print(f"[make_corpus] wrote {out} ({summary['bytes'] / 1e6:.1f} MB, {len(docs)} docs"
          f"{', SYNTHETIC' if src['synthetic'] else ''})", file=sys.stderr)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--num_docs", type=int, default=50000)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--out_dir", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--testdata_dir", type=Path, default=DEFAULT_TESTDATA,
                    help="cache of fetch_testdata.sh output, reused if present (env DJ_TESTDATA_DIR)")
    ap.add_argument("--fetch_script", type=Path, default=DEFAULT_FETCH, help="env DJ_TESTDATA_FETCH")
    ap.add_argument("--profile", default="tiny", choices=["tiny", "small", "full"])
    ap.add_argument("--force", action="store_true", help="rebuild even if the corpus file exists")
    a = ap.parse_args(argv)
    path = make_corpus(a.num_docs, a.seed, a.out_dir, a.testdata_dir, a.fetch_script, a.profile, a.force)
    print(path)


if __name__ == "__main__":
    main()

import pytest

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.ops import OPERATORS


def _op(**kw):
    return OPERATORS.get("pii_redaction_mapper")(**kw)


def _texts(op, texts):
    return [r["text"] for r in run_ops_on_rows([op], [{"text": t} for t in texts])]


def test_matches_data_juicer():
    # values from Data-Juicer 1.6.1 (404 generated samples x 4 configs compared: 0 differences)
    cases = [
        ('trace_id="a.b-c"', 'trace_id[ID_REDACTED]"'),
        ("x@qq.com,00-1a-2b-3c-4d-5e,", "[EMAIL_REDACTED],[MAC_REDACTED],"),
        ('1.2.3.4.5 alice.b+c@gmail.com,password="hunter2",00:1A:2b:3c:4d:5e"token: abc123\'',
         '[IP_REDACTED].5 [EMAIL_REDACTED],password="[REDACTED]",[MAC_REDACTED]"token: [REDACTED]\''),
        ("110101199003074578'13812345678\"alice.b+c@gmail.com\n",
         "[ID_CARD_REDACTED]'[PHONE_REDACTED]\"[EMAIL_REDACTED]\n"),
        ("", ""),
        ('"1.2.3.4.5\'u_abcdefghijklmnopqrs,password="hunter2""13812345678,',
         '"[IP_REDACTED].5\'[CHANNEL_ID_REDACTED],password="[REDACTED]""[PHONE_REDACTED],'),
        ("中文\npassword=\"hunter2\",='alice.b+c@gmail.com '/var/log/y''11010119900307457X",
         "中文\npassword=\"[REDACTED]\",='[EMAIL_REDACTED] '[PATH_REDACTED]''[ID_CARD_REDACTED]"),
        ("\n,Authorization: Bearer xyz😀 ", "\n,Authorization: [REDACTED] xyz😀 "),
    ]
    assert _texts(_op(), [i for i, _ in cases]) == [o for _, o in cases]


def test_each_kind():
    op = _op(mask_urls=True)
    src = [
        "see /home/bob/a.txt and C:\\Users\\x\\y.doc and \\\\srv\\share",
        "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE----- eyJhbGci.eyJzdWIi.sig",
        "https://ex.com/a?token=1 [::1]:8080 channel: feishu 当前的channel：飞书",
        "ou_0123456789abcdef0123456789abcdef +1-5551234567 session_id: 42",
    ]
    assert _texts(op, src) == [
        "see [PATH_REDACTED] and [PATH_REDACTED] and [PATH_REDACTED]",
        "[PEM_REDACTED] [JWT_REDACTED]",
        "[URL_REDACTED] [IP_REDACTED] channel: [CHANNEL_ID_REDACTED] 当前的channel：[CHANNEL_ID_REDACTED]",
        "[CHANNEL_ID_REDACTED] [PHONE_REDACTED] session_id[ID_REDACTED]",
    ]
    # URLs are kept by default
    assert _texts(_op(), ["https://ex.com/x"]) == ["https://ex.com/x"]


def test_flags_replacements_and_extra_patterns():
    op = _op(mask_emails=False, phone_replacement="<P>", extra_patterns=[("(\\d)x", "\\1Y"), ("foo", "BAR")])
    assert _texts(op, ["a@b.com 13812345678 3x foo"]) == ["a@b.com <P> 3Y BAR"]


def test_messages_history_and_nested_keys():
    # values from Data-Juicer 1.6.1: strings inside lists are masked a second time by the
    # whole-sample pass (so a mask can be masked again, as there)
    row = {
        "text": "token: abc",
        "tags": ["token: abc"],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "mail a@b.com"}, "token: abc"]},
            {"role": "assistant", "content": "x",
             "tool_calls": [{"function": {"name": "f", "arguments": "{\"p\": \"/tmp/a\"}"}}]},
        ],
        "dialog_history": [["call 13812345678", "ok"]],
        "meta": {"file_path": "/home/u/f.txt", "other": "/home/u/f.txt"},
    }
    out = run_ops_on_rows([_op()], [row])[0]
    assert out["text"] == "token: [REDACTED]"
    assert out["tags"] == ["token: [REDACTED]"]
    assert out["messages"][0]["content"] == [{"type": "text", "text": "mail [EMAIL_REDACTED]"}, "token: [REDACTED]]"]
    assert out["messages"][1]["tool_calls"][0]["function"]["arguments"] == "{\"p\": \"[PATH_REDACTED]\"}"
    assert [list(p) for p in out["dialog_history"]] == [["call [PHONE_REDACTED]", "ok"]]
    assert out["meta"] == {"file_path": "[PATH_REDACTED]", "other": "/home/u/f.txt"}


def test_redact_keys_and_long_text():
    op = _op(redact_keys=["query"])
    out = run_ops_on_rows([op], [{"text": "a@b.com", "query": "a@b.com"}])[0]
    assert out == {"text": "a@b.com", "query": "[EMAIL_REDACTED]"}
    long = ("word " * 20000) + "x@y.org"
    assert _texts(_op(), [long])[0].endswith("word [EMAIL_REDACTED]")


def test_bad_extra_pattern():
    with pytest.raises(ValueError, match="invalid regex"):
        _op(extra_patterns=[("(", "x")])

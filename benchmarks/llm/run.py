"""Throughput of the ``api`` backend against the local OpenAI-compatible server, beside the
server's own engine on the same prompts.

For each concurrency c (1, 4, 16) it sends N chats through ``APIBackend`` (at most c in flight)
to a local server (data_juicer.models.llm.local_server; transformers engine, batches of up to c
concurrent requests), and runs the same prompts straight through the same engine in this process
in batches of c (what the server can do at best with c requests in flight). Reports requests/s,
generated tokens/s and the ratio api/engine.

    python benchmarks/llm/run.py [--n 48] [--max-tokens 32] [--hidden 256] [--layers 4] [--threads 1]
"""

import argparse
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))

from data_juicer.models.llm import build_chat_backend  # noqa: E402
from data_juicer.models.llm.local_server import ServerProcess  # noqa: E402
from data_juicer.models.llm.tiny import build_tiny_chat_model, load_engine  # noqa: E402


def prompts(n):
    return [[{"role": "system", "content": "You grade text."},
             {"role": "user", "content": f"Rate sample {i}: the quick brown fox jumps over the lazy dog {i}."}]
            for i in range(n)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=48)
    ap.add_argument("--max-tokens", type=int, default=32)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--concurrency", default="1,4,16")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results.json"))
    a = ap.parse_args()
    import torch

    torch.set_num_threads(a.threads)
    work = os.path.join(tempfile.gettempdir(), "dj_llm_bench")
    folder = build_tiny_chat_model(os.path.join(work, f"tiny-{a.hidden}x{a.layers}"), hidden=a.hidden, layers=a.layers)
    chats = prompts(a.n)
    params = {"max_tokens": a.max_tokens, "temperature": 0}
    results = []
    levels = [int(x) for x in a.concurrency.split(",")]
    with ServerProcess(model=folder, work_dir=work, max_tokens=a.max_tokens, max_batch=max(levels),
                       threads=a.threads) as srv:
        engine = load_engine(folder, default_max_tokens=a.max_tokens, max_batch=max(levels))
        for c in levels:
            b = build_chat_backend("api", srv.served_name, model_params={"base_url": srv.base_url},
                                   sampling_params=params, concurrency=c)
            engine.generate(chats[:c], params)  # warm up
            b.chat(chats[:c])  # warm up (connections)
            eng_s = api_s = float("inf")
            for _ in range(a.repeat):  # alternate, keep the best of each (the machine is shared)
                t = time.perf_counter()
                toks = 0
                for s in range(0, a.n, c):
                    toks += sum(g.completion_tokens for g in engine.generate(chats[s:s + c], params))
                eng_s = min(eng_s, time.perf_counter() - t)
                srv.reset()
                t = time.perf_counter()
                out = b.chat(chats)
                api_s = min(api_s, time.perf_counter() - t)
            st = srv.stats()
            row = {"concurrency": c, "n": a.n, "max_tokens": a.max_tokens,
                   "engine_req_s": round(a.n / eng_s, 2), "engine_tok_s": round(toks / eng_s, 1),
                   "api_req_s": round(len(out) / api_s, 2), "api_tok_s": round(toks / api_s, 1),
                   "api_vs_engine": round(eng_s / api_s, 3), "server_max_in_flight": st["max_in_flight"],
                   "server_mean_batch": round(sum(st["batch_sizes"]) / max(1, len(st["batch_sizes"])), 1)}
            results.append(row)
            print(json.dumps(row), flush=True)
            b.close()
    meta = {"model": f"tiny seeded Llama hidden={a.hidden} layers={a.layers} (char tokenizer)",
            "torch_threads": a.threads, "cpu_count": os.cpu_count()}
    with open(a.out, "w") as f:
        json.dump({"meta": meta, "results": results}, f, indent=1)
    print("| concurrency | engine req/s | api req/s | api / engine | server max in flight | mean engine batch |")
    print("|---|---|---|---|---|---|")
    for r in results:
        print(f"| {r['concurrency']} | {r['engine_req_s']} | {r['api_req_s']} | {r['api_vs_engine']:.0%} | "
              f"{r['server_max_in_flight']} | {r['server_mean_batch']} |")


if __name__ == "__main__":
    main()

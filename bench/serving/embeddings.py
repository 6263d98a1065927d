#!/usr/bin/env python3
# Embeddings throughput: 512 inputs of 64 random token ids, one per request, then 64 per request, then all 512
# in one request, against a server started with --task embed and --served-model-name m.
# Usage: python3 bench/serving/embeddings.py http://127.0.0.1:8000
import json, time, random, urllib.request, sys
url = sys.argv[1]
random.seed(1)
inputs = [[random.randint(300, 7999) for _ in range(64)] for _ in range(512)]
def post(batch):
    req = urllib.request.Request(url + "/v1/embeddings", data=json.dumps({"model": "m", "input": batch}).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req) as r:
        body = json.load(r)
    assert len(body["data"]) == len(batch), body
    return body
post(inputs[:16])  # warm up
for rnd in range(2):
    t = time.time()
    for x in inputs:
        post([x])
    one = time.time() - t
    res = {}
    for size in (64, 512):
        t = time.time()
        for i in range(0, 512, size):
            post(inputs[i:i + size])
        res[size] = time.time() - t
    print(f"round {rnd}: batch 1 {512/one:.1f} inputs/s ({one:.2f} s); batched 64/request {512/res[64]:.1f} inputs/s ({res[64]:.2f} s, {one/res[64]:.2f}x); one request of 512 {512/res[512]:.1f} inputs/s ({one/res[512]:.2f}x)")

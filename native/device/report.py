#!/usr/bin/env python3
"""Merges check.sh's parts (probe.json, presets.json, junit.txt, torch.json, nereid.json) into OUT/report.json."""
import json
import os
import re
import sys


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        return {"error": f"{os.path.basename(path)}: {e}"}


def main(out):
    r = {"probe": load(os.path.join(out, "probe.json")), "presets": load(os.path.join(out, "presets.json"))}
    try:
        with open(os.path.join(out, "presets-newer-exit.txt")) as f:
            r["presets_newer_function"] = f.read().strip()
    except OSError as e:
        r["presets_newer_function"] = str(e)
    try:
        with open(os.path.join(out, "junit.txt")) as f:
            text = f.read()
        counts = {k: int(v) for v, k in re.findall(r"\[\s*(\d+) tests (successful|failed|skipped|aborted)\s*\]", text)}
        r["tests"] = counts
        r["tests_failed"] = re.findall(r"(?m)^.*✘.*$", text)[:40]
    except OSError as e:
        r["tests"] = {"error": str(e)}
    torch_r = load(os.path.join(out, "torch.json"))
    nereid = load(os.path.join(out, "nereid.json"))
    r["torch"] = torch_r
    r["nereid"] = nereid
    cmp = {}
    if "prefill_tok_s" in torch_r and "prefill_tok_s" in nereid:
        cmp["prefill_ratio"] = round(nereid["prefill_tok_s"] / torch_r["prefill_tok_s"], 3)
    if "decode" in torch_r and "decode" in nereid:
        tb = {d["batch"]: d["tok_s"] for d in torch_r["decode"]}
        cmp["decode_ratio"] = {str(d["batch"]): round(d["tok_s"] / tb[d["batch"]], 3)
                               for d in nereid["decode"] if d["batch"] in tb}
    if "long_context" in nereid and "decode" in nereid:
        one = [d for d in nereid["decode"] if d["batch"] == 1]
        if one:   # a batch-1 step after 4K positions against one after ~200: what long attention costs
            cmp["long_context_step_ratio"] = round(nereid["long_context"]["step_ms"] / one[0]["step_ms"], 3)
    if "decode_eager" in nereid and "decode" in nereid:
        graphs = {d["batch"]: d["tok_s"] for d in nereid["decode"]}
        # decode with CUDA graphs against the same decode launched kernel by kernel (--enforce-eager)
        cmp["graph_speedup"] = {str(d["batch"]): round(graphs[d["batch"]] / d["tok_s"], 3)
                                for d in nereid["decode_eager"] if d["batch"] in graphs}
    if "sampled_decode" in nereid and "decode" in nereid:
        same = [d for d in nereid["decode"] if d["batch"] == nereid["sampled_decode"]["batch"]]
        if same:   # a step drawing from the whole softmax (T 1) against a greedy one, at the largest batch
            cmp["sampled_step_ratio"] = round(nereid["sampled_decode"]["step_ms"] / same[0]["step_ms"], 3)
    if "greedy_ids" in torch_r and "greedy_ids" in nereid:
        a, b = torch_r["greedy_ids"], nereid["greedy_ids"]
        same = 0
        while same < min(len(a), len(b)) and a[same] == b[same]:
            same += 1
        cmp["greedy_ids_equal_prefix"] = same
        cmp["greedy_ids_compared"] = min(len(a), len(b))
        # where they part, was it a near tie for either side (bf16 activations against float ones)?
        if same < min(len(a), len(b)):
            cmp["margin_at_first_difference"] = {"torch": torch_r["greedy_margins"][same],
                                                 "nereid": nereid["greedy_margins"][same]}
    r["comparison"] = cmp
    with open(os.path.join(out, "report.json"), "w") as f:
        json.dump(r, f, indent=1)
    print(json.dumps(cmp))


if __name__ == "__main__":
    main(sys.argv[1])

#!/usr/bin/env python3
"""The PyTorch side of native/device/check.sh, on the GPU machine.

Creates a Llama-3-8B-shaped model with random BF16 weights directly on the GPU (nothing is carried to
the machine), saves it as a Hugging Face directory (safetensors, the llama3 tokenizer from the bundle's
fixtures) for Nereid to load, and measures the same weights through transformers: HBM copy bandwidth,
prefill of --prompt tokens, decode at each --batches size (--gen tokens after 128-token prompts), and
the greedy ids and top-2 margins for a fixed 32-token prompt (written to DIR/prompt_ids.json for
Nereid). Writes JSON to --out.
"""
import argparse
import gzip
import json
import os
import shutil
import time

import torch
from transformers import LlamaConfig, LlamaForCausalLM


def sync():
    torch.cuda.synchronize()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--fixtures", required=True)
    ap.add_argument("--layers", type=int, default=32)
    ap.add_argument("--prompt", type=int, default=512)
    ap.add_argument("--gen", type=int, default=128)
    ap.add_argument("--batches", default="1,8,64")
    ap.add_argument("--ids-gen", type=int, default=16)
    a = ap.parse_args()
    report = {"torch": torch.__version__, "device": torch.cuda.get_device_name(0)}
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=128256, hidden_size=4096, intermediate_size=14336, num_hidden_layers=a.layers,
                      num_attention_heads=32, num_key_value_heads=8, head_dim=128, max_position_embeddings=8192,
                      rms_norm_eps=1e-5, rope_theta=500000.0, tie_word_embeddings=False, bos_token_id=128000,
                      eos_token_id=128001)
    t = time.time()
    with torch.device("cuda"):
        model = LlamaForCausalLM(cfg).to(torch.bfloat16)
    model.eval()
    sync()
    report["create_seconds"] = round(time.time() - t, 2)
    t = time.time()
    os.makedirs(a.dir, exist_ok=True)
    model.save_pretrained(a.dir, safe_serialization=True, max_shard_size="5GB")
    tokenizers = os.path.join(a.fixtures, "tokenizers", "llama3")
    with gzip.open(os.path.join(tokenizers, "tokenizer.json.gz"), "rb") as src, \
            open(os.path.join(a.dir, "tokenizer.json"), "wb") as dst:
        shutil.copyfileobj(src, dst)
    shutil.copy(os.path.join(tokenizers, "tokenizer_config.json"), os.path.join(a.dir, "tokenizer_config.json"))
    report["save_seconds"] = round(time.time() - t, 2)
    report["parameters"] = sum(p.numel() for p in model.parameters())

    # HBM bandwidth: a device-to-device copy of 4 GiB reads and writes 8 GiB
    n = 4 << 30
    src = torch.empty(n, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    dst.copy_(src)
    sync()
    t = time.time()
    for _ in range(10):
        dst.copy_(src)
    sync()
    report["hbm_copy_gb_s"] = round(2 * n * 10 / (time.time() - t) / 1e9, 1)
    del src, dst

    g = torch.Generator().manual_seed(3)
    ids = torch.randint(3, 128000, (32,), generator=g)
    with open(os.path.join(a.dir, "prompt_ids.json"), "w") as f:
        json.dump(ids.tolist(), f)
    with torch.inference_mode():
        out = model.generate(ids[None].cuda(), max_new_tokens=a.ids_gen, min_new_tokens=a.ids_gen, do_sample=False,
                             pad_token_id=0, output_scores=True, return_dict_in_generate=True)
        report["greedy_ids"] = out.sequences[0, 32:].tolist()
        margins = []
        for s in out.scores:
            top = torch.topk(s[0].float(), 2).values
            margins.append(round(float(top[0] - top[1]), 4))
        report["greedy_margins"] = margins

        x = torch.randint(3, 128000, (1, a.prompt), device="cuda")
        model(x)
        sync()
        t = time.time()
        for _ in range(3):
            model(x)
        sync()
        report["prefill_tokens"] = a.prompt
        report["prefill_tok_s"] = round(3 * a.prompt / (time.time() - t), 1)

        decode = []
        for b in [int(v) for v in a.batches.split(",")]:
            x = torch.randint(3, 128000, (b, 128), device="cuda")
            mask = torch.ones_like(x)
            model.generate(x, attention_mask=mask, max_new_tokens=4, min_new_tokens=4, do_sample=False, pad_token_id=0)
            sync()
            t = time.time()
            model(x)
            sync()
            prefill = time.time() - t
            t = time.time()
            model.generate(x, attention_mask=mask, max_new_tokens=a.gen, min_new_tokens=a.gen, do_sample=False,
                           pad_token_id=0)
            sync()
            seconds = time.time() - t - prefill
            decode.append({"batch": b, "tok_s": round(b * a.gen / seconds, 1), "step_ms": round(1000 * seconds / a.gen, 3)})
            print(f"torch decode batch {b}: {b * a.gen / seconds:.1f} tok/s", flush=True)
        report["decode"] = decode
    with open(a.out, "w") as f:
        json.dump(report, f)
    print(f"torch prefill {a.prompt}: {report['prefill_tok_s']} tok/s; HBM copy {report['hbm_copy_gb_s']} GB/s", flush=True)


if __name__ == "__main__":
    main()

"""A small, real training loop for the device check (tests/device/run.sh).

Builds a model from its published shape (no download: random weights),
feeds it synthetic batches, and trains with AdamW (SGD for ResNets, as their
recipes do) for --steps steps or --seconds seconds, whichever comes first.
Mixed precision is autocast, as Hugging Face Trainer's --bf16/--fp16 and
Lightning's bf16-mixed do. With --grow the batch doubles every few steps, as
a user's "try a bigger batch" does, until the GPU runs out of memory.

It writes what PyTorch saw (peak allocated and reserved, parameters, the
last batch, whether it ran out of memory) as one JSON object to
$AUGUR_DEVICE_STATS, and exits 1 on CUDA out-of-memory, as a real job does.
"""
import argparse
import json
import os
import sys
import time

import torch

GPT2 = {  # n_layer, n_embd, n_head: the published GPT-2 shapes
    "gpt2": (12, 768, 12),
    "gpt2-medium": (24, 1024, 16),
    "gpt2-large": (36, 1280, 20),
    "gpt2-xl": (48, 1600, 25),
}


LLAMA = {  # layers, width, heads, kv heads, MLP width, vocab, tied embeddings: published configs
    "tinyllama-1.1b": (22, 2048, 32, 4, 5632, 32000, False),
    "llama-3.2-1b": (16, 2048, 32, 8, 8192, 128256, True),
    "qwen2.5-0.5b": (24, 896, 14, 2, 4864, 151936, True),
    "qwen2.5-1.5b": (28, 1536, 12, 2, 8960, 151936, True),
    "llama-3.2-3b": (28, 3072, 24, 8, 8192, 128256, True),
}


def build(name, seq_len):
    """The model and a function making one synthetic batch of n."""
    base = name.lower().split("/")[-1]
    if base in LLAMA:
        from transformers import LlamaConfig, LlamaForCausalLM, Qwen2Config, Qwen2ForCausalLM
        layers, width, heads, kv, ffn, vocab, tied = LLAMA[base]
        cls, cfgcls = (Qwen2ForCausalLM, Qwen2Config) if base.startswith("qwen") else (LlamaForCausalLM, LlamaConfig)
        cfg = cfgcls(num_hidden_layers=layers, hidden_size=width, num_attention_heads=heads, num_key_value_heads=kv,
                     intermediate_size=ffn, vocab_size=vocab, tie_word_embeddings=tied, max_position_embeddings=max(2048, seq_len))
        model = cls(cfg)

        def batch(n):
            ids = torch.randint(0, vocab, (n, seq_len), device="cuda")
            return lambda m: m(input_ids=ids, labels=ids).loss
        return model, batch
    if name in GPT2:
        from transformers import GPT2Config, GPT2LMHeadModel
        layers, width, heads = GPT2[name]
        cfg = GPT2Config(n_layer=layers, n_embd=width, n_head=heads, n_positions=max(1024, seq_len))
        model = GPT2LMHeadModel(cfg)

        def batch(n):
            ids = torch.randint(0, cfg.vocab_size, (n, seq_len), device="cuda")
            return lambda m: m(input_ids=ids, labels=ids).loss
        return model, batch
    if base.startswith("bert") or base.startswith("roberta"):
        from transformers import BertConfig, BertForMaskedLM, RobertaConfig, RobertaForMaskedLM
        cfgcls, cls = (RobertaConfig, RobertaForMaskedLM) if base.startswith("roberta") else (BertConfig, BertForMaskedLM)
        extra = {"vocab_size": 50265, "max_position_embeddings": 514, "pad_token_id": 1} if base.startswith("roberta") else {}
        if "large" in base:
            extra.update(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096)
        cfg = cfgcls(**extra)
        model = cls(cfg)

        def batch(n):
            ids = torch.randint(0, cfg.vocab_size, (n, seq_len), device="cuda")
            return lambda m: m(input_ids=ids, labels=ids).loss
        return model, batch
    import torchvision
    model = getattr(torchvision.models, name)(weights=None)

    def batch(n):
        x = torch.randn(n, 3, 224, 224, device="cuda")
        y = torch.randint(0, 1000, (n,), device="cuda")
        return lambda m: torch.nn.functional.cross_entropy(m(x), y)
    return model, batch


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", required=True)
    p.add_argument("--batch_size", type=int, required=True)
    p.add_argument("--seq_len", type=int, default=512)
    p.add_argument("--bf16", action="store_true")
    p.add_argument("--fp16", action="store_true")
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--seconds", type=float, default=10)
    p.add_argument("--grow", type=int, default=0, help="double the batch every N steps")
    p.add_argument("--spike_gib", type=float, default=0,
                   help="first hold this many GiB for a moment and give them back to the driver: a peak between two 1 s samples")
    a = p.parse_args()

    torch.manual_seed(0)
    with torch.device("cuda"):  # initialised on the GPU: seconds, not a minute, for gpt2-xl
        model, batch = build(a.model, a.seq_len)
    model = model.cuda().train()
    if a.model.startswith("resnet"):
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    else:
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    dtype = torch.bfloat16 if a.bf16 else torch.float16 if a.fp16 else None
    scaler = torch.amp.GradScaler("cuda", enabled=a.fp16)
    stats = {"model": a.model, "params": sum(q.numel() for q in model.parameters()),
             "precision": "bf16" if a.bf16 else "fp16" if a.fp16 else "fp32", "seq_len": a.seq_len}
    if a.spike_gib:
        spike = torch.empty(int(a.spike_gib * 2**30), dtype=torch.uint8, device="cuda")
        torch.cuda.synchronize()
        t = time.time()
        del spike
        torch.cuda.empty_cache()  # back to the driver: NVML's used memory drops at once
        stats["spike_mib"] = a.spike_gib * 1024
        stats["spike_held_ms"] = round((time.time() - t) * 1000, 1)
    n, step, oom, t0 = a.batch_size, 0, False, time.time()
    try:
        while step < a.steps and time.time() - t0 < a.seconds:
            if a.grow and step and step % a.grow == 0:
                n *= 2
            stats["batch_size"] = n
            loss_of = batch(n)
            with torch.autocast("cuda", dtype=dtype or torch.float32, enabled=dtype is not None):
                loss = loss_of(model)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            opt.zero_grad(set_to_none=True)
            step += 1
        torch.cuda.synchronize()
    except torch.OutOfMemoryError as e:
        oom = True
        print(f"CUDA out of memory at batch {n}: {e}", file=sys.stderr)
    stats.update(steps=step, oom=oom, seconds=round(time.time() - t0, 1),
                 max_allocated_mib=torch.cuda.max_memory_allocated() / 2**20,
                 max_reserved_mib=torch.cuda.max_memory_reserved() / 2**20)
    free, total = torch.cuda.mem_get_info()
    stats.update(used_at_end_mib=(total - free) / 2**20, total_mib=total / 2**20)
    if os.environ.get("AUGUR_DEVICE_STATS"):
        with open(os.environ["AUGUR_DEVICE_STATS"], "w") as f:
            json.dump(stats, f)
    print(json.dumps(stats))
    if oom:
        # A real job dies here with the traceback; its memory is held until
        # the process exits, as when Python unwinds the exception.
        sys.exit(1)


if __name__ == "__main__":
    main()

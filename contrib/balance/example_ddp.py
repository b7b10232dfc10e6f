"""Example: a PyTorch DDP training loop that follows Augur's rebalancing plan.

Every REPORT_EVERY steps rank 0 gathers all ranks' compute times, sends them
to augurd, and broadcasts the new shares; each rank then takes its share of
the global batch and scales its loss so that the all-reduced gradient is the
mean over the whole global batch (loss * share * world / global).

Run under srun with AUGUR_BALANCE_URL set; torch is needed by this example
only, never by augur_balance.py.
"""

import os
import time

import torch
import torch.distributed as dist

from augur_balance import BalanceClient, BalanceError, shares_for

GLOBAL_BATCH = 256
REPORT_EVERY = 50


def train(model, dataset, steps, device):
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    ddp = torch.nn.parallel.DistributedDataParallel(model.to(device), device_ids=[device.index])
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
    client = BalanceClient.from_env() if rank == 0 else None
    shares = shares_for(None, world, GLOBAL_BATCH)
    times = []

    for step in range(1, steps + 1):
        # This rank's slice of the global batch: offset by the shares before it.
        start = sum(shares[:rank])
        x, y = dataset.batch(step, start, shares[rank])
        x, y = x.to(device), y.to(device)

        # Compute time only: forward and backward with the gradient exchange
        # deferred (no_sync), then the exchange outside the timed part.
        torch.cuda.synchronize(device)
        t0 = time.perf_counter()
        with ddp.no_sync():
            loss = torch.nn.functional.cross_entropy(ddp(x), y)
            (loss * shares[rank] * world / GLOBAL_BATCH).backward()
        torch.cuda.synchronize(device)
        times.append(time.perf_counter() - t0)
        for p in ddp.parameters():  # the exchange no_sync deferred
            if p.grad is not None:
                dist.all_reduce(p.grad)
                p.grad /= world
        opt.step()
        opt.zero_grad(set_to_none=True)

        if step % REPORT_EVERY == 0:
            # Gather every rank's recent times on rank 0.
            mine = torch.tensor(times[-REPORT_EVERY:], device=device)
            gathered = [torch.empty_like(mine) for _ in range(world)] if rank == 0 else None
            dist.gather(mine, gathered, dst=0)
            new = torch.tensor(shares, device=device)
            if rank == 0:
                steps_report = [
                    {"rank": r, "step": step - REPORT_EVERY + i + 1, "seconds": float(s), "samples": shares[r]}
                    for r, t in enumerate(gathered) for i, s in enumerate(t.tolist())
                ]
                try:
                    answer = client.report(steps_report, world_size=world, global_batch=GLOBAL_BATCH)
                    new = torch.tensor(shares_for(answer, world, GLOBAL_BATCH), device=device)
                except BalanceError as e:  # never stop training for augurd
                    print("augur balance: %s" % e, flush=True)
            dist.broadcast(new, src=0)
            shares = new.tolist()
            times.clear()
    dist.destroy_process_group()


if __name__ == "__main__":
    print("see train(); this example needs a model and a dataset with .batch(step, start, n)")

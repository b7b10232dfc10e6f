"""Client for augurd's balance endpoint (Augur sidecar/balance).

Standard library only. A training job's rank 0 reports every rank's compute
time per step and fetches a rebalancing plan: each data-parallel rank's
share of the global batch (plan["shares"], summing exactly to the global
batch, every rank >= 1) and, for pipelines, a layer split.

Every request is signed with a fresh MUNGE credential made by `munge -s`
over "augur-balance/1 METHOD PATH SHA256(BODY)", so augurd knows the caller
is the job's owner and the credential authorises exactly this request.

    client = BalanceClient.from_env()          # AUGUR_BALANCE_URL, SLURM_JOB_ID
    answer = client.report(steps, world_size=8, global_batch=256)
    plan = answer.get("plan")                  # None until enough steps

Set AUGUR_BALANCE_URL to augurd's balance.listen address, e.g.
http://augurd.cluster:6832 .
"""

import hashlib
import json
import os
import subprocess
import urllib.error
import urllib.request

PAYLOAD_PREFIX = "augur-balance/1"


class BalanceError(Exception):
    """augurd refused or could not be reached; training should carry on."""


def payload(method, path, body):
    """The string a request's MUNGE credential must carry."""
    return "%s %s %s %s" % (PAYLOAD_PREFIX, method, path, hashlib.sha256(body).hexdigest())


def munge_credential(text, munge="munge", timeout=10):
    """Sign text with `munge -s`; returns the credential string."""
    try:
        out = subprocess.run([munge, "-s", text], check=True, capture_output=True, timeout=timeout)
    except (OSError, subprocess.SubprocessError) as e:
        raise BalanceError("munge -s failed: %s" % e) from e
    return out.stdout.decode("ascii").strip()


class BalanceClient:
    def __init__(self, url, job_id, timeout=5.0, signer=munge_credential):
        self.url = url.rstrip("/")
        self.job_id = int(job_id)
        self.timeout = timeout
        self.signer = signer

    @classmethod
    def from_env(cls, **kw):
        url = os.environ.get("AUGUR_BALANCE_URL")
        job = os.environ.get("SLURM_JOB_ID")
        if not url or not job:
            raise BalanceError("set AUGUR_BALANCE_URL and run inside a Slurm job (SLURM_JOB_ID)")
        return cls(url, job, **kw)

    def _call(self, method, path, body=b""):
        cred = self.signer(payload(method, path, body))
        req = urllib.request.Request(self.url + path, data=body if method == "POST" else None, method=method)
        req.add_header("Authorization", "MUNGE " + cred)
        if method == "POST":
            req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                return json.loads(resp.read().decode("utf-8"))
        except urllib.error.HTTPError as e:
            try:
                msg = json.loads(e.read().decode("utf-8")).get("error", "")
            except ValueError:
                msg = ""
            raise BalanceError("augurd: HTTP %d %s" % (e.code, msg)) from e
        except (urllib.error.URLError, OSError, ValueError) as e:
            raise BalanceError("augurd unreachable: %s" % e) from e

    def report(self, steps, world_size, global_batch, gpus=None, pipeline=None):
        """Send step times and get the answer (assessment, plan, pipeline).

        steps: list of {"rank": r, "step": n, "seconds": compute_s, "samples": share}
        gpus: optional list of {"rank", "sm_util", "power_w", "sm_clock_mhz", ...}
        pipeline: optional {"layer_costs": [...], "bounds": [...], "stage_seconds": [...]}
        """
        req = {"world_size": int(world_size), "global_batch": int(global_batch), "steps": steps}
        if gpus:
            req["gpus"] = gpus
        if pipeline:
            req["pipeline"] = pipeline
        body = json.dumps(req, separators=(",", ":")).encode("utf-8")
        return self._call("POST", "/v1/jobs/%d/steps" % self.job_id, body)

    def plan(self):
        """The job's latest answer, without reporting."""
        return self._call("GET", "/v1/jobs/%d/plan" % self.job_id)


def shares_for(answer, world_size, global_batch):
    """The shares to use: the plan's, or equal shares while there is none."""
    plan = (answer or {}).get("plan")
    if plan and len(plan.get("shares", [])) == world_size and sum(plan["shares"]) == global_batch:
        return list(plan["shares"])
    return [global_batch // world_size + (1 if r < global_batch % world_size else 0) for r in range(world_size)]

// Package balance is augurd's HTTP+JSON endpoint for running jobs: a job's
// ranks report their step times (and, if they have it, their GPUs'
// telemetry), and the job fetches a rebalancing plan computed by the pure
// package sidecar/skew. It is off unless balance.listen is set.
//
//	rank 0 of a job ──POST /v1/jobs/{id}/steps──> verify MUNGE ─> owner check ─> Tracker.Observe/Assess
//	  (contrib/balance)     Authorization: MUNGE <cred>      (signer is the      ─> skew.Replan, PlanPipeline
//	                                                          job's owner, root  ─> answer: the plan
//	augur balance JOBID ──GET /v1/jobs/{id}/plan──>           or slurm_user)     ─> store.AddSkew on changes
//
// Authentication: every request carries a fresh MUNGE credential whose
// payload is Payload(method, path, body): the request's method, path and the
// SHA-256 of its body. The credential therefore authorises exactly that
// request, for that job; MUNGE refuses it a second time (replay) and after
// its TTL. The signer's uid must be the job's owner, as Slurm reports it,
// or root or slurm_user: a user can report for and read only their own jobs.
//
// State: one skew.Tracker and plan per job in memory, bounded by
// balance.max_jobs (least recently reporting job dropped first) and
// balance.job_idle; what matters later (slow ranks appearing or clearing,
// each plan change) is written to augurd's store, table skew.
package balance

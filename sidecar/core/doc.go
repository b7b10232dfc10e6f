// Package core is Augur's decision core for a submission: a pure function
// from the request, the job's history and the site's policy to a Decision
// (accept with annotation, GPU-type rewrite and initial SiteFactor, or reject
// with a message that tells the user what to change).
//
//	wire.Request ─┐
//	[]Outcome ────┼─> Decide ─> Decision ─> wire.Response (the shim applies it)
//	Policy ───────┘                     └─> store row (augurd records it)
//
// Nothing here touches a socket, a database, the clock or Slurm: augurd feeds
// it live requests, tests feed it tables, and the simulator can feed it trace
// jobs, so all three run the same decisions.
package core

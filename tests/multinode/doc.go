// Package multinode holds Augur's end-to-end tests on a three-node Slurm
// whose slurmd hosts live in network namespaces, started by
// tests/cluster/multinode-up.sh as root:
//
//	root ns: slurmctld, augurd, munged ── bridge augurbr0 10.231.0.1/24
//	           ├─ veth ── augur-n1 10.231.0.11: slurmd -N node1 (gpu:a100:2), augur-node agent
//	           ├─ veth ── augur-n2 10.231.0.12: slurmd -N node2 (gpu:v100:2), augur-node agent
//	           └─ veth ── augur-n3 10.231.0.13: slurmd -N node3 (gpu:t4:2),   augur-node agent
//
//	go test -tags e2e ./tests/multinode/   (make e2e-multinode builds first and runs this)
//
// The tests place jobs by GPU type and across all three nodes, follow each
// node's MUNGE-signed job report over its veth to augurd's outcomes
// listener on the bridge, and black-hole one node's reports mid-job to see
// them retried from its outbox and stored once.
//
// Without the e2e build tag the package is empty, so `go test ./...` stays a
// unit-test run that needs neither root nor Slurm.
package multinode

# Augur: `make help` lists the targets. `make test` is what CI runs.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

GO        ?= go
BIN       := bin
CLUSTER   ?= $(CURDIR)/tests/.cluster
FUZZTIME  ?= 10s
SLURM_INC ?= /usr/include
# The plugin exports only Slurm's symbols (slurm-plugin/augur.lds).
PLUGIN_LDFLAGS := -s -w -extldflags "-Wl,--version-script=$(CURDIR)/slurm-plugin/augur.lds"
GOFILES := $(shell find . -name '*.go' -not -path './tests/.cluster/*')

export CGO_ENABLED := 1
export CGO_CFLAGS := -I$(SLURM_INC) -O2 -Wno-deprecated-declarations

.PHONY: help build build-test-plugin deps test test-unit test-contrib fuzz e2e demo bench bench-submit bench-plugin lint clean cluster-up cluster-down

help: ## list the targets
	@grep -hE '^[a-zA-Z0-9_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-18s %s\n", $$1, $$2}'

deps: ## install what building and the real-Slurm tests need (Debian; as root)
	tests/cluster/install-deps.sh

$(BIN)/job_submit_augur.so: $(GOFILES) slurm-plugin/job_submit_augur.c slurm-plugin/shim.h slurm-plugin/augur.lds
	@test -f $(SLURM_INC)/slurm/slurm.h || { echo "Slurm headers missing: run 'make deps' (libslurm-dev)"; exit 1; }
	$(GO) build -buildmode=c-shared -ldflags '$(PLUGIN_LDFLAGS)' -o $@.tmp ./slurm-plugin
	rm -f $(dir $@)job_submit_augur.so.h
	mv -f $@.tmp $@   # rename, never overwrite a loaded plugin in place

$(BIN)/test/job_submit_augur.so: $(GOFILES) slurm-plugin/job_submit_augur.c slurm-plugin/shim.h slurm-plugin/augur.lds
	@mkdir -p $(BIN)/test
	$(GO) build -tags augur_testhooks -buildmode=c-shared -ldflags '$(PLUGIN_LDFLAGS)' -o $@.tmp ./slurm-plugin
	rm -f $(dir $@)job_submit_augur.so.h
	mv -f $@.tmp $@

# augur-node's test build also accepts node.nvml: mock-dgxa100 (fake GPUs fed
# by the e2e jobs' AUGUR_FAKE_GPU_MEM_MIB); the production build refuses it.
$(BIN)/test/augur-node: $(GOFILES)
	@mkdir -p $(BIN)/test
	$(GO) build -tags augur_testhooks -o $@.tmp ./sidecar/cmd/augur-node
	mv -f $@.tmp $@   # rename: slurmd may be running the old one as Prolog

$(BIN)/augurd $(BIN)/augur $(BIN)/augur-node: $(GOFILES)
	$(GO) build -o $(BIN)/ ./sidecar/cmd/augurd ./sidecar/cmd/augur ./sidecar/cmd/augur-node

build: $(BIN)/job_submit_augur.so $(BIN)/augurd $(BIN)/augur $(BIN)/augur-node ## build the plugin, augurd, augur and augur-node into bin/

build-test-plugin: $(BIN)/test/job_submit_augur.so $(BIN)/test/augur-node ## test builds in bin/test/: the plugin with its panic switch, augur-node with mock NVML

lint: ## gofmt and go vet
	@out=$$(gofmt -l $(GOFILES)); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

test-contrib: ## the Python client in contrib/balance (standard library only)
	cd contrib/balance && python3 -m unittest -v test_augur_balance

test-unit: ## unit tests with the race detector (as root it starts munged first, and the munge tests must run)
	@if [ "$$(id -u)" = 0 ]; then tests/cluster/munge-up.sh; export AUGUR_REQUIRE_MUNGE=1; fi; \
	  $(GO) test -race -count=1 ./...

fuzz: ## run every fuzz target for FUZZTIME each (a bare fuzztime-boundary deadline is retried, see tests/fuzz.sh)
	FUZZTIME=$(FUZZTIME) GO=$(GO) tests/fuzz.sh

cluster-up: build build-test-plugin ## start the local test cluster (root): slurmctld, slurmd, munge, augurd
	tests/cluster/up.sh $(CLUSTER)

cluster-down: ## stop the local test cluster
	tests/cluster/down.sh $(CLUSTER)

e2e: build build-test-plugin ## end-to-end tests on a real slurmctld/slurmd (root), then e2e-multinode
	tests/cluster/install-deps.sh
	AUGUR_TEST_CLUSTER_DIR=$(CLUSTER) $(GO) test -tags e2e -count=1 -v -timeout 20m ./tests/e2e/
	$(MAKE) --no-print-directory e2e-multinode

.PHONY: e2e-multinode
MULTI_CLUSTER ?= $(CURDIR)/tests/.cluster-multi
e2e-multinode: build build-test-plugin ## three slurmd hosts in network namespaces (root): GPU-type placement, reports over veths, a dropped route
	tests/cluster/install-deps.sh
	AUGUR_TEST_MN_DIR=$(MULTI_CLUSTER) $(GO) test -tags e2e -count=1 -v -timeout 10m ./tests/multinode/

test: deps lint test-unit test-contrib fuzz e2e ## everything: lint, unit, fuzz (short), real-Slurm end to end

demo: build build-test-plugin ## bring up the local cluster and show Augur deciding realistic training jobs
	tests/demo.sh $(CLUSTER)

bench: ## Go benchmarks: decision throughput, store, round trip
	$(GO) test -run '^$$' -bench . -benchmem ./sidecar/... ./slurm-plugin/... ./predictor/...

SIM_OUT ?= $(BIN)/sim
SIM_TRACES ?= ../shared/data/traces
bench-sim: $(BIN)/augur ## full-trace simulations (Philly 32x8, all policies; Gavel K80/P100/V100 type-aware vs type-blind) into $(SIM_OUT)/*.json
	@mkdir -p $(SIM_OUT)
	$(BIN)/augur simulate --trace $(SIM_TRACES)/philly/philly.csv --format philly --nodes 32 --gpus-per-node 8 \
	  --policies fifo,sjf-oracle,srtf-oracle,tiresias,hrrn,mlfq-borda,augur --json --plot $(SIM_OUT)/philly.svg > $(SIM_OUT)/philly.json
	for tr in 6214e9 6c71a0 ee9e8c 103959; do for seed in 1 2 3; do for b in false true; do \
	  $(BIN)/augur simulate --trace $(SIM_TRACES)/gavel/$$tr.trace --format gavel --nodes 24 --gpus-per-node 4 --gpu-types k80,p100,v100 \
	    --policies fifo,tiresias,hrrn,mlfq-borda,augur,srtf-oracle --seed $$seed --type-blind=$$b --json > $(SIM_OUT)/gavel-$$tr-seed$$seed-typeblind-$$b.json; \
	done; done; done
	$(GO) test -run '^$$' -bench 'Schedule1000x100' -benchtime 100x ./sidecar/policy/

bench-submit: build build-test-plugin ## slurmctld submit cost: 1,000 sbatch -H with no plugin vs plugin+augurd (reuse off, reuse 1s) vs plugin with augurd stopped
	tests/bench/submit.sh $(CLUSTER)

bench-plugin: build ## the plugin's own cost per job_submit call, outside slurmctld (skip, ask, reuse)
	tests/bench/plugin.sh

clean: ## remove build outputs
	-tests/cluster/down.sh $(CLUSTER) 2>/dev/null
	rm -rf $(BIN) $(CLUSTER)

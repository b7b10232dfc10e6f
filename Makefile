# Augur: `make help` lists the targets. `make test` is what CI runs.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

GO        ?= go
FUZZTIME  ?= 10s
SLURM_INC ?= /usr/include

# SLURM=22.05|24.11|26.05 builds, tests and benchmarks against that Slurm
# release: the targets below run inside a Debian root that holds it
# (tests/cluster/slurm-root.sh, created on first use and cached in
# /var/cache/augur/roots), with outputs in bin/slurm-RELEASE/. Left empty,
# they use the Slurm installed on this machine and bin/.
SLURM ?=
ifeq ($(SLURM),)
BIN           := bin
CLUSTER       ?= $(CURDIR)/tests/.cluster
MULTI_CLUSTER ?= $(CURDIR)/tests/.cluster-multi
else
BIN           := bin/slurm-$(SLURM)
CLUSTER       ?= $(CURDIR)/tests/.cluster-$(SLURM)
MULTI_CLUSTER ?= $(CURDIR)/tests/.cluster-multi-$(SLURM)
endif
# The test clusters, the demo and the benchmarks find the binaries here.
export AUGUR_BIN := $(CURDIR)/$(BIN)

# The plugin exports only Slurm's symbols (slurm-plugin/augur.lds).
PLUGIN_LDFLAGS := -s -w -extldflags "-Wl,--version-script=$(CURDIR)/slurm-plugin/augur.lds"
GOFILES := $(shell find . -path ./tests/.cluster\* -prune -o -name '*.go' -print)

export CGO_ENABLED := 1
export CGO_CFLAGS := -I$(SLURM_INC) -O2 -Wno-deprecated-declarations

# The targets that depend on the Slurm release. With SLURM set, outside its
# root, each one re-runs itself inside the root (AUGUR_IN_ROOT says where
# slurm-root.sh has put us).
RELEASE_TARGETS := build build-deps build-test-plugin cluster-deps cluster-up cluster-down e2e e2e-multinode e2e-core demo bench-submit bench-plugin

.PHONY: device-check help deps lint test test-unit test-contrib fuzz bench bench-sim prior clean e2e-releases slurm-roots $(RELEASE_TARGETS)

help: ## list the targets
	@grep -hE '^[a-zA-Z0-9_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-18s %s\n", $$1, $$2}'

deps: ## install everything building and every test needs (Debian; as root)
	tests/cluster/install-deps.sh all

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

test: deps lint test-unit test-contrib fuzz e2e e2e-releases ## everything: lint, unit, fuzz (short), end to end on this machine's Slurm, then on 26.05 and 24.11

# The other releases make test covers: the whole e2e suite on 26.05 (the
# newest), the submit path, telemetry and live scheduling on 24.11. The
# machine's own Slurm (22.05 on Debian 12) ran the whole suite before.
e2e-releases: ## e2e on the other releases: make e2e SLURM=26.05, make e2e-core SLURM=24.11 (both run; fails if either failed)
	rc=0; \
	  $(MAKE) --no-print-directory e2e SLURM=26.05 || rc=1; \
	  $(MAKE) --no-print-directory e2e-core SLURM=24.11 || rc=1; \
	  exit $$rc

slurm-roots: ## create (or check) the cached Debian roots of Slurm 22.05, 24.11 and 26.05
	for r in 22.05 24.11 26.05; do tests/cluster/slurm-root.sh $$r ensure; done

device-check: build ## on a GPU machine: real PyTorch training jobs sampled by augur-node through real NVML (tests/device/README.md); DEVICE_OUT=dir
	tests/device/run.sh $(or $(DEVICE_OUT),$(CURDIR)/out/device)

bench: ## Go benchmarks: decision throughput, store, round trip
	$(GO) test -run '^$$' -bench . -benchmem ./sidecar/... ./slurm-plugin/... ./predictor/...

PRIOR_SRC ?= ../shared/data/memory/timm-train-throughput-rtx3090.csv
prior: ## rebuild the embedded memory prior (predictor/prior_timm.csv) from timm's benchmark
	$(GO) run ./predictor/internal/mkprior $(PRIOR_SRC) > predictor/prior_timm.csv.tmp
	mv -f predictor/prior_timm.csv.tmp predictor/prior_timm.csv

SIM_OUT ?= $(BIN)/sim
SIM_TRACES ?= ../shared/data/traces
bench-sim: $(BIN)/augur ## full-trace simulations (Philly 32x8, all policies; Gavel K80/P100/V100 type-aware vs type-blind) into $(SIM_OUT)/*.json
	@mkdir -p $(SIM_OUT)
	$(BIN)/augur simulate --trace $(SIM_TRACES)/philly/philly.csv --format philly --nodes 32 --gpus-per-node 8 \
	  --policies fifo,sjf-oracle,srtf-oracle,tiresias,hrrn,mlfq-borda,augur --json --plot $(SIM_OUT)/philly.svg > $(SIM_OUT)/philly.json
	for pred in "--predictor history" "--duration-error 0.3" "--duration-error 0.1"; do \
	  $(BIN)/augur simulate --trace $(SIM_TRACES)/philly/philly.csv --format philly --nodes 32 --gpus-per-node 8 \
	    --policies fifo --user-limits 10 $$pred --json > "$(SIM_OUT)/philly-limits$$(echo $$pred | tr -d ' -').json"; \
	done
	for tr in 6214e9 6c71a0 ee9e8c 103959; do for seed in 1 2 3; do for b in false true; do \
	  $(BIN)/augur simulate --trace $(SIM_TRACES)/gavel/$$tr.trace --format gavel --nodes 24 --gpus-per-node 4 --gpu-types k80,p100,v100 \
	    --policies fifo,tiresias,hrrn,mlfq-borda,augur,srtf-oracle --seed $$seed --type-blind=$$b --json > $(SIM_OUT)/gavel-$$tr-seed$$seed-typeblind-$$b.json; \
	done; done; done
	$(GO) test -run '^$$' -bench 'Schedule1000x100' -benchtime 100x ./sidecar/policy/

clean: ## remove build outputs
	-tests/cluster/down.sh $(CLUSTER) 2>/dev/null
	rm -rf bin tests/.cluster tests/.cluster-[0-9]*

ifneq ($(SLURM),)
ifneq ($(AUGUR_IN_ROOT),$(SLURM))
# Outside the release's root: run the same target in there. The e2e suite
# also gets this machine's own build of the plugin, to show what Slurm does
# with a plugin built for another release.
$(RELEASE_TARGETS):
	$(if $(filter e2e,$@),$(MAKE) --no-print-directory build-test-plugin SLURM=)
	$(if $(filter e2e,$@),AUGUR_TEST_FOREIGN_PLUGIN=$(CURDIR)/bin/test/job_submit_augur.so) \
	  tests/cluster/slurm-root.sh $(SLURM) run $(MAKE) --no-print-directory $@ SLURM=$(SLURM)
IN_OTHER_ROOT := 1
endif
endif

ifndef IN_OTHER_ROOT
build-deps: ## install the compiler and Slurm's headers when missing (Debian; as root)
	tests/cluster/install-deps.sh build

cluster-deps: ## install what the test clusters and the demo need when missing (Debian; as root)
	tests/cluster/install-deps.sh cluster

$(BIN)/job_submit_augur.so: $(GOFILES) slurm-plugin/job_submit_augur.c slurm-plugin/shim.h slurm-plugin/augur.lds
	@test -f $(SLURM_INC)/slurm/slurm.h || { echo "Slurm headers missing: run 'make build-deps' (libslurm-dev)"; exit 1; }
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
	@mkdir -p $(BIN)
	$(GO) build -o $(BIN)/ ./sidecar/cmd/augurd ./sidecar/cmd/augur ./sidecar/cmd/augur-node

build: build-deps ## build the plugin, augurd, augur and augur-node into bin/ (SLURM=R: into bin/slurm-R/, against that release)
	@$(MAKE) --no-print-directory $(BIN)/job_submit_augur.so $(BIN)/augurd $(BIN)/augur $(BIN)/augur-node

build-test-plugin: build-deps ## test builds in bin/test/: the plugin with its panic switch, augur-node with mock NVML
	@$(MAKE) --no-print-directory $(BIN)/test/job_submit_augur.so $(BIN)/test/augur-node

cluster-up: cluster-deps build build-test-plugin ## start the local test cluster (root): slurmctld, slurmd, munge, augurd
	tests/cluster/up.sh $(CLUSTER)

cluster-down: ## stop the local test cluster
	tests/cluster/down.sh $(CLUSTER)

e2e: cluster-deps build build-test-plugin ## end-to-end tests on a real slurmctld/slurmd (root), then e2e-multinode
	AUGUR_TEST_CLUSTER_DIR=$(CLUSTER) $(GO) test -tags e2e -count=1 -v -timeout 25m ./tests/e2e/
	$(MAKE) --no-print-directory e2e-multinode

# The tests of what changes most between releases: every GPU request form,
# rewrites and rejections (also from the day-one prior, with a script's own
# arguments), fail-open, concurrent submitters, telemetry from
# the node hook, and live scheduling through libslurm.
E2E_CORE := TestGPURequestForms|TestSubmissionEnvironment|TestJobConfigFiles|TestGPUType|TestHistoryRewritesTypelessRequest|TestCertainOOMIsRejected|TestAugurdDownFailsOpen|TestPanicInShim|TestConcurrentSubmitters|TestJobOutcomeReachesAugurd|TestLive|TestSacctJoinsWithSlurm|TestRewriteFitsTheNode|TestOOMRecovery|TestIdleGPU|TestTimeLimit|TestRewriteFromPrior
e2e-core: cluster-deps build build-test-plugin ## the submit-path, telemetry and live-scheduling e2e tests only
	AUGUR_TEST_CLUSTER_DIR=$(CLUSTER) $(GO) test -tags e2e -count=1 -v -timeout 20m -run '$(E2E_CORE)' ./tests/e2e/

e2e-multinode: cluster-deps build build-test-plugin ## three slurmd hosts in network namespaces (root): GPU-type placement, reports over veths, a dropped route
	AUGUR_TEST_MN_DIR=$(MULTI_CLUSTER) $(GO) test -tags e2e -count=1 -v -timeout 10m ./tests/multinode/

demo: cluster-deps build build-test-plugin ## bring up the local cluster and show Augur deciding realistic training jobs (SLURM=26.05: on that release)
	tests/demo.sh $(CLUSTER)

bench-submit: cluster-deps build build-test-plugin ## slurmctld submit cost, sequential and with 8 concurrent submitters: no plugin vs plugin+augurd vs augurd stopped
	tests/bench/submit.sh $(CLUSTER)

bench-plugin: build ## the plugin's own cost per job_submit call outside slurmctld (skip, ask, reuse)
	tests/bench/plugin.sh
endif

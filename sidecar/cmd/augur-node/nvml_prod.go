//go:build !augur_testhooks

package main

import (
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// openNVML returns the GPU backend node.nvml names. Production builds have
// only the real one: the mock exists in the test build (bin/test/augur-node,
// tag augur_testhooks), so a stray setting can never fake a node's GPUs.
func openNVML(kind string) (nvml.Interface, error) {
	if kind == "real" {
		return nvml.New(), nil
	}
	return nil, fmt.Errorf("node.nvml is %q, but this augur-node is a production build, which reads only real GPUs: set node.nvml: real (the mock-dgxa100 backend exists only in the test build, bin/test/augur-node)", kind)
}

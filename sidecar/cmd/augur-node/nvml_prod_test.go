//go:build !augur_testhooks

package main

import (
	"strings"
	"testing"
)

func TestProductionBuildRefusesMockNVML(t *testing.T) {
	if _, err := openNVML("mock-dgxa100"); err == nil || !strings.Contains(err.Error(), "production build") {
		t.Errorf("openNVML(mock-dgxa100) = %v, want a production-build refusal", err)
	}
	if _, err := openNVML("real"); err != nil {
		t.Errorf("openNVML(real) = %v", err)
	}
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/augur-hpc/augur/sidecar/balance"
	"github.com/augur-hpc/augur/sidecar/skew"
)

type fakeEncoder struct{}

func (fakeEncoder) Encode(p []byte) (string, error) { return "CRED(" + string(p) + ")", nil }

func TestFetchPlan(t *testing.T) {
	want := balance.Answer{JobID: 7, Reports: 3, Assessment: skew.Assessment{Ready: true, SlowRanks: []int{1}, MaxSlowdown: 2,
		Ranks: []skew.RankSkew{{Rank: 0, Throughput: 64, StepSeconds: 1, Share: 64, Slowdown: 1},
			{Rank: 1, Throughput: 32, StepSeconds: 2, Share: 64, Slowdown: 2, Slow: true, Cause: skew.CauseClock}}},
		Plan: &skew.Plan{Version: 1, GlobalBatch: 128, Shares: []int{85, 43}, CurrentStepSeconds: 2, PredictedStepSeconds: 1.34, Gain: 0.49}}
	var auth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth = r.Header.Get("Authorization")
		if r.URL.Path == "/v1/jobs/8/plan" {
			w.WriteHeader(403)
			w.Write([]byte(`{"error":"job 8 is not yours"}`))
			return
		}
		json.NewEncoder(w).Encode(want)
	}))
	defer srv.Close()
	got, err := fetchPlan(context.Background(), fakeEncoder{}, srv.URL, 7)
	if err != nil {
		t.Fatal(err)
	}
	if wantAuth := "MUNGE CRED(" + balance.Payload("GET", "/v1/jobs/7/plan", nil) + ")"; auth != wantAuth {
		t.Errorf("Authorization = %q, want %q", auth, wantAuth)
	}
	var b bytes.Buffer
	printAnswer(&b, got)
	for _, s := range []string{"slow ranks: 1", "clock_throttled", "plan v1", "+49.0% throughput", "85"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("output lacks %q:\n%s", s, b.String())
		}
	}
	if _, err := fetchPlan(context.Background(), fakeEncoder{}, srv.URL, 8); err == nil || !strings.Contains(err.Error(), "not yours") {
		t.Errorf("refusal: %v", err)
	}
}

package store_test

import (
	"context"
	"strings"
	"testing"

	"github.com/augur-hpc/augur/sidecar/store"
)

// TestResign: when signatures change version, the stored submissions and
// their outcomes are keyed under the new ones (so History finds them under
// the signature a new submission gets), once per version; a large script
// stored gzipped is read back for it.
func TestResign(t *testing.T) {
	s := openStore(t, dbPath(t), store.Options{})
	ctx := context.Background()
	big := "#!/bin/bash\n" + strings.Repeat("# padding the script past the compression threshold\n", 200) + "python train.py --model big\n"
	for i, script := range []string{"#!/bin/bash\npython train.py --model a\n", "#!/bin/bash\npython train.py --model a\n", big} {
		sub := newSub(token(i+1)).User(1000, "alice").Script(script).Job(uint64(600 + i)).Obj()
		sub.Signature = "old"
		if err := s.Record(ctx, sub); err != nil {
			t.Fatal(err)
		}
		if _, err := s.PutOutcome(ctx, newOutcome(uint64(600+i)).User(1000).Sig("").PeakGPUMem(1000).Obj()); err != nil {
			t.Fatal(err)
		}
	}
	if h, _ := s.History(ctx, 1000, "old", 10); len(h) != 3 {
		t.Fatalf("before: %d outcomes under the old signature", len(h))
	}
	calls := 0
	sign := func(script string, args, env []string) string {
		calls++
		if args != nil || env != nil {
			t.Errorf("arguments %q, environment %q for a submission that recorded none", args, env)
		}
		if strings.Contains(script, "--model big") {
			return "new-big"
		}
		return "new-a"
	}
	n, err := s.Resign(ctx, "2", sign)
	if err != nil || n != 3 || calls != 2 {
		t.Fatalf("Resign = %d, %v after %d signings; want 3 submissions, 2 distinct scripts signed", n, err, calls)
	}
	for sig, want := range map[string]int{"new-a": 2, "new-big": 1, "old": 0} {
		if h, err := s.History(ctx, 1000, sig, 10); err != nil || len(h) != want {
			t.Errorf("History(%q) = %d outcomes, %v; want %d", sig, len(h), err, want)
		}
	}
	if sub, err := s.Submission(ctx, token(3)); err != nil || sub.Signature != "new-big" {
		t.Errorf("submission 3: %q, %v", sub.Signature, err)
	}
	if n, err := s.Resign(ctx, "2", sign); err != nil || n != 0 || calls != 2 {
		t.Errorf("the same version again: %d re-signed, %d signings, %v", n, calls, err)
	}
	if n, err := s.Resign(ctx, "3", func(string, []string, []string) string { return "v3" }); err != nil || n != 3 {
		t.Errorf("a newer version: %d, %v", n, err)
	}
	if _, err := s.Resign(ctx, "", sign); err == nil {
		t.Error("no version accepted")
	}
}

// TestResignWithArguments: one script submitted with different arguments
// (sbatch job.sh gpt2, sbatch job.sh gpt2-xl) or environments (MODEL=gpt2
// sbatch job.sh) is signed once per distinct arguments and environment,
// each with its own, and a request that did not record arguments (an older
// shim) is signed with them unknown.
func TestResignWithArguments(t *testing.T) {
	s := openStore(t, dbPath(t), store.Options{})
	ctx := context.Background()
	script := "#!/bin/bash\npython train.py --model \"$1\"\n"
	for i, req := range []string{`{"args_known":true,"args":["gpt2"]}`, `{"args_known":true,"args":["gpt2-xl"]}`,
		`{"args_known":true,"args":["gpt2"]}`, `{"args_known":true}`, `{}`,
		`{"args_known":true,"env":["MODEL=gpt2"]}`, `{"args_known":true,"env":["MODEL=gpt2-xl"]}`} {
		sub := newSub(token(i+1)).User(1000, "alice").Script(script).Obj()
		sub.Signature, sub.Request = "old", []byte(req)
		if err := s.Record(ctx, sub); err != nil {
			t.Fatal(err)
		}
	}
	calls := 0
	n, err := s.Resign(ctx, "2", func(_ string, args, env []string) string {
		calls++
		sig := "unknown"
		if args != nil {
			sig = "args=" + strings.Join(args, ",")
		}
		if env != nil {
			sig += " env=" + strings.Join(env, ",")
		}
		return sig
	})
	if err != nil || n != 7 || calls != 6 {
		t.Fatalf("Resign = %d, %v after %d signings; want 7 submissions, 6 distinct arguments and environments", n, err, calls)
	}
	for i, want := range []string{"args=gpt2", "args=gpt2-xl", "args=gpt2", "args=", "unknown", "args= env=MODEL=gpt2",
		"args= env=MODEL=gpt2-xl"} {
		if sub, err := s.Submission(ctx, token(i+1)); err != nil || sub.Signature != want {
			t.Errorf("submission %d: %q, %v; want %q", i+1, sub.Signature, err, want)
		}
	}
}

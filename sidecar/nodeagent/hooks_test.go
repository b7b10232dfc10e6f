package nodeagent

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestHooksPokeAndIgnoreWhatTheyDoNotKnow(t *testing.T) {
	ctx := context.Background()
	st, c := openStore(t), newClock()
	h, pokes := hooks(st, c)
	prolog(t, h, 1, 0)
	if err := h.Prolog(ctx, HookEnv{JobID: 2}); err != nil { // no GPUs: not recorded
		t.Fatal(err)
	}
	epilog(t, h, 2, "0:0") // never recorded: nothing
	epilog(t, h, 3, "0:0") // unknown: nothing
	epilog(t, h, 1, "0:0") // ends job 1
	epilog(t, h, 1, "1:0") // a second Epilog: nothing
	want := []Poke{{PokeProlog, 1}, {PokeEpilog, 1}}
	if d := cmp.Diff(want, *pokes); d != "" {
		t.Errorf("pokes (-want +got):\n%s", d)
	}
	r := outbox(t, st)
	if len(r) != 1 || r[1].ExitState != StateCompleted {
		t.Errorf("outbox = %+v", r)
	}
}

func TestHooksWorkWithTheAgentDown(t *testing.T) {
	st, c := openStore(t), newClock()
	h, _ := hooks(st, c)
	sock := filepath.Join(t.TempDir(), "node.sock")
	h.Poke = func(ctx context.Context, p Poke) error { return SendPoke(ctx, sock, p, 200*time.Millisecond) }
	start := time.Now()
	prolog(t, h, 1, 0)
	epilog(t, h, 1, "0:0")
	if d := time.Since(start); d > time.Second {
		t.Errorf("hooks took %s with the agent down", d)
	}
	if len(outbox(t, st)) != 1 {
		t.Error("report not enqueued with the agent down")
	}
}

func TestWriteJobMap(t *testing.T) {
	ctx := context.Background()
	st, c := openStore(t), newClock()
	dir := filepath.Join(t.TempDir(), "dcgm")
	h, _ := hooks(st, c)
	h.DCGMDir = dir
	read := func() map[string]string {
		t.Helper()
		out := map[string]string{}
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), ".") {
				continue
			}
			b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
			out[e.Name()] = string(b)
		}
		return out
	}
	steps := []struct {
		name string
		do   func()
		want map[string]string
	}{
		{"job 10 on GPUs 0,1", func() { prolog(t, h, 10, 0, 1) }, map[string]string{"0": "10\n", "1": "10\n"}},
		{"job 9 shares GPU 1", func() { prolog(t, h, 9, 1) }, map[string]string{"0": "10\n", "1": "9\n10\n"}},
		{"job 10 ends", func() { epilog(t, h, 10, "0:0") }, map[string]string{"0": "", "1": "9\n"}},
		{"job 9 ends", func() { epilog(t, h, 9, "0:0") }, map[string]string{"0": "", "1": ""}},
	}
	for _, s := range steps {
		s.do()
		if d := cmp.Diff(s.want, read()); d != "" {
			t.Errorf("%s (-want +got):\n%s", s.name, d)
		}
	}
	if err := WriteJobMap(ctx, st, dir); err != nil {
		t.Fatal(err)
	}
}

func TestPokesReachTheAgent(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "node.sock")
	os.WriteFile(sock, nil, 0o600) // a stale plain file is not removed ...
	if _, err := ListenPokes(sock); err == nil {
		t.Fatal("ListenPokes replaced a file that is not a socket")
	}
	os.Remove(sock)
	l, err := ListenPokes(sock)
	if err != nil {
		t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close()
	l, err = ListenPokes(sock) // ... a stale socket is
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(sock); fi.Mode().Perm() != 0o600 {
		t.Errorf("socket mode %v", fi.Mode().Perm())
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan pokeReq, 4)
	bad := make(chan error, 4)
	go servePokes(ctx, l, got, func(err error) { bad <- err })
	defer l.Close()
	if err := SendPoke(ctx, sock, Poke{PokeEpilog, 77}, time.Second); err != nil {
		t.Fatal(err)
	}
	if p := <-got; p.Poke != (Poke{PokeEpilog, 77}) || p.done != nil {
		t.Errorf("got %+v", p)
	}
	cn, _ := net.Dial("unix", sock)
	cn.Write([]byte("reboot now\n"))
	cn.Close()
	if err := <-bad; err == nil {
		t.Error("a bad poke was not reported")
	}
}

func TestParsePoke(t *testing.T) {
	cases := map[string]struct {
		in      string
		want    Poke
		wantErr bool
	}{
		"prolog":        {in: "prolog 42\n", want: Poke{PokeProlog, 42}},
		"epilog no nl":  {in: "epilog 7", want: Poke{PokeEpilog, 7}},
		"round":         {in: "round 9\n", want: Poke{PokeRound, 9}},
		"round no id":   {in: "round\n", wantErr: true},
		"unknown kind":  {in: "stop 1\n", wantErr: true},
		"no id":         {in: "prolog\n", wantErr: true},
		"zero":          {in: "prolog 0\n", wantErr: true},
		"two spaces":    {in: "prolog  1\n", wantErr: true},
		"too long":      {in: "prolog " + strings.Repeat("1", 80), wantErr: true},
		"trailing junk": {in: "prolog 1 2\n", wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParsePoke(tc.in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// FuzzParsePoke: anything root runs may write to the agent's socket.
func FuzzParsePoke(f *testing.F) {
	for _, s := range []string{"prolog 1\n", "epilog 18446744073709551615\n", "x", "prolog -1", "round 3\n", "round 0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePoke(s)
		if err != nil {
			return
		}
		back, err := ParsePoke(p.String())
		if err != nil || back != p {
			t.Fatalf("round trip of %+v: %+v %v", p, back, err)
		}
	})
}

package live

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseGresList(t *testing.T) {
	cases := map[string]struct {
		in   string
		want []gres
	}{
		"node gres":        {"gpu:a100:4,gpu:t4:4", []gres{{"gpu", "a100", 4}, {"gpu", "t4", 4}}},
		"socket binding":   {"gpu:a100:4(S:0-1),gpu:t4:2(S:0)", []gres{{"gpu", "a100", 4}, {"gpu", "t4", 2}}},
		"used":             {"gpu:a100:2(IDX:0,2),gpu:t4:0(IDX:N/A)", []gres{{"gpu", "a100", 2}, {"gpu", "t4", 0}}},
		"job detail":       {"gpu:a100:1(IDX:0)", []gres{{"gpu", "a100", 1}}},
		"count in CNT":     {"gpu:a100(CNT:2)(IDX:0-1)", []gres{{"gpu", "a100", 2}}},
		"typeless":         {"gpu:2", []gres{{"gpu", "", 2}}},
		"22.05 request":    {"gres:gpu:a100:1", []gres{{"gpu", "a100", 1}}},
		"empty and (null)": {"", nil},
		"junk skipped":     {"gpu:a:b:c:d,,gpu:t4:-1,shard:8", []gres{{"shard", "", 8}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, parseGresList(tc.in), cmp.AllowUnexported(gres{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestExpandHosts(t *testing.T) {
	cases := map[string][]string{
		"":              nil,
		"vm":            {"vm"},
		"n[1-3],m1":     {"n1", "n2", "n3", "m1"},
		"gpu[08-10,12]": {"gpu08", "gpu09", "gpu10", "gpu12"},
		"bad[3-1]":      {"bad[3-1]"},
	}
	for in, want := range cases {
		if diff := cmp.Diff(want, expandHosts(in)); diff != "" {
			t.Errorf("%q (-want +got):\n%s", in, diff)
		}
	}
}

func FuzzParseGresList(f *testing.F) {
	f.Add("gpu:a100:2(IDX:0,2),gpu:t4:0(IDX:N/A)")
	f.Add("gpu:a100(CNT:2)(IDX:0-1)")
	f.Fuzz(func(t *testing.T, s string) {
		for _, g := range parseGresList(s) {
			if g.Count < 0 || g.Count > maxGresCount || g.Name == "" {
				t.Fatalf("bad %+v from %q", g, s)
			}
		}
	})
}

func FuzzExpandHosts(f *testing.F) {
	f.Add("n[1-3],m[01-02,7]")
	f.Fuzz(func(t *testing.T, s string) {
		if len(expandHosts(s)) > 2*maxHosts+1 {
			t.Fatal("too many hosts")
		}
	})
}

package predictor

import (
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestScriptCache(t *testing.T) {
	c := NewScriptCache(2)
	want := ParseScript(hfScript)
	for i := range 3 {
		if diff := cmp.Diff(want, c.Parse(hfScript)); diff != "" {
			t.Fatalf("parse %d (-want +got):\n%s", i, diff)
		}
	}
	if h, m := c.Stats(); h != 2 || m != 1 {
		t.Errorf("hits %d, misses %d; want 2, 1", h, m)
	}
	// What a caller does to its copy stays with it.
	s := c.Parse(hfScript)
	s.Features.From["model"] = "changed"
	s.Sbatch[0].Value = "changed"
	s.Features.Unknown = append(s.Features.Unknown[:0], "changed")
	if diff := cmp.Diff(want, c.Parse(hfScript)); diff != "" {
		t.Errorf("the cache kept a caller's change (-want +got):\n%s", diff)
	}
	// Least recently used out first.
	c.Parse(trainScript)
	c.Parse(script200)
	_, before := c.Stats()
	c.Parse(hfScript)
	if _, after := c.Stats(); after != before+1 {
		t.Errorf("hfScript still cached after two newer scripts in a cache of 2")
	}
	var nilCache *ScriptCache
	if diff := cmp.Diff(want, nilCache.Parse(hfScript)); diff != "" {
		t.Errorf("nil cache (-want +got):\n%s", diff)
	}
}

func TestScriptCacheConcurrent(t *testing.T) {
	c := NewScriptCache(8)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				text := fmt.Sprintf("%s\n# variant %d\n", trainScript, (g+i)%12)
				s := c.Parse(text)
				s.Features.From["model"] = "mine"
				if s.Features.Model != "resnet50" {
					t.Errorf("model %q", s.Features.Model)
				}
			}
		})
	}
	wg.Wait()
}

// BenchmarkScriptCache compares a parse with a cache hit on script200.
func BenchmarkScriptCache(b *testing.B) {
	b.Run("parse", func(b *testing.B) {
		for b.Loop() {
			ParseScript(script200)
		}
	})
	b.Run("hit", func(b *testing.B) {
		c := NewScriptCache(16)
		c.Parse(script200)
		for b.Loop() {
			c.Parse(script200)
		}
	})
}

// TestScriptCacheEnv: one script with two environments is two readings;
// the same environment again is a hit.
func TestScriptCacheEnv(t *testing.T) {
	c := NewScriptCache(8)
	script := "#!/bin/bash\npython train.py --model ${MODEL:-resnet18}\n"
	for _, tc := range []struct {
		env  []string
		want string
	}{{nil, "resnet18"}, {[]string{"MODEL=resnet50"}, "resnet50"}, {[]string{"MODEL=vit_base_patch16_224"}, "vit_base_patch16_224"},
		{[]string{"MODEL=resnet50"}, "resnet50"}} {
		if got := c.ParseEnv(script, []string{}, tc.env).Features.Model; got != tc.want {
			t.Errorf("env %q: model %q, want %q", tc.env, got, tc.want)
		}
	}
	if h, m := c.Stats(); h != 1 || m != 3 {
		t.Errorf("hits %d, misses %d; want 1, 3", h, m)
	}
}

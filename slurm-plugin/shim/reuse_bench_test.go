package shim

import (
	"strings"
	"testing"
	"time"

	"github.com/augur-hpc/augur/slurm-plugin/wire"
)

// BenchmarkReuseHit is the shim's own cost of answering a submission from
// the reuse window: key, lookup, new token, re-tokened answer (1 KiB script).
func BenchmarkReuseHit(b *testing.B) {
	rc := newReuseCache(time.Hour)
	script := strings.Repeat("#SBATCH --gres=gpu:1\n", 50)
	first := submission(script)
	now := time.Now()
	rc.store(reuseKey(first), &wire.Response{V: wire.Version, Token: first.Token, Action: wire.Accept,
		Annotation: "augur:tok=" + first.Token + " pred_gpu_mem=3G(p95:3.3G) pred_time=01:00:00 src=history/history runs=3"}, now)
	b.ReportAllocs()
	for b.Loop() {
		r := submission(script)
		r.Token = NewToken()
		if _, ok := rc.lookup(r, reuseKey(r), now); !ok {
			b.Fatal("miss")
		}
		if len(rc.pending) > 1000 {
			rc.take()
		}
	}
}

package shim

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/augur-hpc/augur/slurm-plugin/wire"
)

func TestScriptEnv(t *testing.T) {
	script := `#!/bin/bash
#SBATCH --gres=gpu:1
export HF_HOME=/scratch/$USER/hf
huggingface-cli login --token "$HF_TOKEN"
python train.py --model "${MODEL:?}" --out ${OUT_DIR:-out} --lr ${#LR} $EXTRA_ARGS
`
	environ := []string{
		"HOME=/home/ada", "USER=ada", "MODEL=meta-llama/Llama-2-7b-hf", "HF_TOKEN=hf_abcdef", "EDITOR=vi",
		"SLURM_JOB_ID=12", "SBATCH_PARTITION=gpu", "BATCH_SIZE=16", "TRAIN_MICRO_BATCH_SIZE=2",
		"CUDA_VISIBLE_DEVICES=0,1", "MODEL=second", "LR=1e-4", "EXTRA_ARGS=" + strings.Repeat("x", wire.MaxEnvValue+1),
		"noequals",
	}
	want := []string{"USER=ada", "MODEL=meta-llama/Llama-2-7b-hf", "HF_TOKEN", "BATCH_SIZE=16", "TRAIN_MICRO_BATCH_SIZE=2",
		"LR=1e-4", "EXTRA_ARGS"}
	if got := ScriptEnv(script, environ); !slices.Equal(got, want) {
		t.Errorf("ScriptEnv = %q\nwant %q", got, want)
	}
	if got := ScriptEnv(script, nil); got != nil {
		t.Errorf("no environment: %q", got)
	}
	if got := ScriptEnv("#!/bin/bash\nhostname\n", []string{"HOME=/h"}); got != nil {
		t.Errorf("nothing referenced: %q", got)
	}
	// A tilde reads HOME: augurd finds ~/sft/run.yaml under it.
	if got := ScriptEnv("#!/bin/bash\ncd ~/sft\npython t.py run.yaml\n", []string{"USER=u", "HOME=/h"}); !slices.Equal(got, []string{"HOME=/h"}) {
		t.Errorf("a tilde: %q, want HOME", got)
	}
}

// TestScriptEnvBounds: however large the environment, what is sent stays
// within the wire's limits, and what does not fit goes by name or not at all.
func TestScriptEnvBounds(t *testing.T) {
	var script strings.Builder
	var environ []string
	for i := range 2 * wire.MaxEnv {
		name := "V" + strings.Repeat("A", i%7) + string(rune('A'+i%26)) + strings.Repeat("B", i/26)
		script.WriteString("echo $" + name + "\n")
		environ = append(environ, name+"="+strings.Repeat("v", wire.MaxEnvValue))
	}
	got := ScriptEnv(script.String(), environ)
	n := 0
	for _, e := range got {
		n += len(e)
	}
	if len(got) > wire.MaxEnv || n > wire.MaxEnvBytes {
		t.Fatalf("%d entries of %d bytes, limits %d and %d", len(got), n, wire.MaxEnv, wire.MaxEnvBytes)
	}
	if len(got) != wire.MaxEnv || !strings.Contains(got[0], "=") || strings.Contains(got[len(got)-1], "=") {
		t.Errorf("want the first values in full and the rest by name, up to %d entries; got %d, first %.20q, last %.20q",
			wire.MaxEnv, len(got), got[0], got[len(got)-1])
	}
	if _, err := wire.DecodeRequest([]byte(`{"v":1,"token":"ab","env":["` + strings.Join(got, `","`) + `"]}`)); err != nil {
		t.Errorf("augurd refuses what the shim sends: %v", err)
	}
}

func TestReferenced(t *testing.T) {
	refs := referenced(`a $A b ${B:-x} ${#C} ${!D} $1 $$ $@ "$E_1"x '$F' ${G[0]} $ $9H $A`)
	if want := []string{"A", "B", "C", "D", "E_1", "F", "G"}; !slices.Equal(refs.list, want) {
		t.Errorf("referenced = %q, want %q", refs.list, want)
	}
	// Past namesListed names, a set; the same answers.
	var many strings.Builder
	for i := range 3 * namesListed {
		fmt.Fprintf(&many, "$V%d $V%d ", i, i/2)
	}
	refs = referenced(many.String())
	if refs.set == nil || !refs.has("V0") || !refs.has("V95") || refs.has("V96") || len(refs.set) != 3*namesListed {
		t.Errorf("a long list: %d in the set, V0 %v, V95 %v, V96 %v", len(refs.set), refs.has("V0"), refs.has("V95"), refs.has("V96"))
	}
}

// FuzzScriptEnv: any script and environment give entries within the wire's
// limits, each a valid name with or without its value, without panicking.
func FuzzScriptEnv(f *testing.F) {
	f.Add("python t.py --model $MODEL ${BS:-8}", "MODEL=gpt2\x00BS=4\x00HF_TOKEN=x\x00SLURM_X=1")
	f.Add("$", "=\x00==\x00A")
	f.Fuzz(func(t *testing.T, script, env string) {
		got := ScriptEnv(script, strings.Split(env, "\x00"))
		n := 0
		for _, e := range got {
			n += len(e)
			if name, _, _ := strings.Cut(e, "="); name == "" && e != "" {
				t.Fatalf("entry %q has no name", e)
			}
		}
		if len(got) > wire.MaxEnv || n > wire.MaxEnvBytes {
			t.Fatalf("%d entries of %d bytes", len(got), n)
		}
	})
}

// BenchmarkScriptEnv picks what a 200-line script reads from an
// environment of 120 variables (a login shell's, with modules loaded).
func BenchmarkScriptEnv(b *testing.B) {
	var script strings.Builder
	script.WriteString("#!/bin/bash\n#SBATCH --gres=gpu:8\nexport HF_HOME=/scratch/$USER/hf\n")
	for i := range 195 {
		fmt.Fprintf(&script, "echo \"step %d on $HOSTNAME\" # ${MODEL:-gpt2} ${BS:-8}\n", i)
	}
	script.WriteString("torchrun --nproc_per_node 8 train.py --model $MODEL --batch_size $BS\n")
	environ := []string{"USER=ada", "HOME=/home/ada", "MODEL=meta-llama/Llama-2-7b-hf", "BS=4", "HF_TOKEN=hf_x"}
	for i := len(environ); i < 120; i++ {
		environ = append(environ, fmt.Sprintf("VAR_%d=/opt/modules/%d/lib:/usr/lib:/usr/local/lib", i, i))
	}
	text := script.String()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		ScriptEnv(text, environ)
	}
}

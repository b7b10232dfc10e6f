package predictor

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/augur-hpc/augur/internal/shareddata"
)

// script builds a batch script from #SBATCH options and command lines.
type scriptBuilder struct{ lines []string }

func newScript() *scriptBuilder { return &scriptBuilder{lines: []string{"#!/bin/bash"}} }
func (b *scriptBuilder) Sbatch(opt string) *scriptBuilder {
	b.lines = append(b.lines, "#SBATCH "+opt)
	return b
}
func (b *scriptBuilder) Run(cmd string) *scriptBuilder { b.lines = append(b.lines, cmd); return b }
func (b *scriptBuilder) Obj() string                   { return strings.Join(b.lines, "\n") + "\n" }

func TestFeatures(t *testing.T) {
	cases := featureCases{
		"torchrun with #SBATCH gres": {
			script: trainScript,
			want: Features{Launcher: "torchrun", Program: "train.py", Model: "resnet50", ModelFrom: "flag",
				BatchSize: 64, GPUs: 2, GPUType: "a100", JobName: "resnet"},
		},
		"python -m torch.distributed.run, HF name, per-device batch, bf16": {
			script: newScript().Sbatch("-G a100:8").Run("python -m torch.distributed.run --nproc_per_node 8 run_clm.py " +
				"--model_name_or_path meta-llama/Llama-2-7b-hf --per_device_train_batch_size 4 --bf16 " +
				"--gradient_accumulation_steps 8 --block_size 2048 --num_train_epochs 3").Obj(),
			want: Features{Launcher: "torchrun", Program: "run_clm.py", Model: "meta-llama/llama-2-7b-hf", ModelFrom: "flag",
				BatchSize: 4, Precision: "bf16", SeqLen: 2048, GradAccum: 8, Epochs: 3, GPUs: 8, GPUType: "a100"},
		},
		"deepspeed with ZeRO config and shell variables": {
			script: newScript().Sbatch("--gres=gpu:4").Sbatch("-N 2").
				Run("MODEL=gpt2-large").Run("export BS=${BS:-16}").Run("SEQ=1024").
				Run("deepspeed --num_gpus 4 --num_nodes 2 train.py --model $MODEL --micro-batch-size ${BS} \\").
				Run("   --deepspeed_config configs/ds_zero3.json --fp16 --seq-length $SEQ --train-iters 5000").Obj(),
			want: Features{Launcher: "deepspeed", Program: "train.py", Model: "gpt2-large", ModelFrom: "flag", BatchSize: 16,
				Precision: "fp16", SeqLen: 1024, ZeROStage: 3, Steps: 5000, GPUs: 8},
		},
		"accelerate launch": {
			script: newScript().Run("accelerate launch --num_processes 2 --mixed_precision bf16 finetune.py --model-name bert-base-uncased --batch_size 32 --max_seq_length 512").Obj(),
			want: Features{Launcher: "accelerate", Program: "finetune.py", Model: "bert-base-uncased", ModelFrom: "flag",
				BatchSize: 32, Precision: "bf16", SeqLen: 512, GPUs: 2},
		},
		"srun python with image size and amp": {
			script: newScript().Sbatch("--gpus=v100:1").Run("module load cuda").
				Run("srun --ntasks 1 --cpus-per-task 8 python -u train.py --arch vit_base_patch16_224 --bs 128 --img-size 224 --amp --epochs 90").Obj(),
			want: Features{Launcher: "srun", Program: "train.py", Model: "vit_base_patch16_224", ModelFrom: "flag",
				BatchSize: 128, Precision: "amp", ImageSize: 224, Epochs: 90, GPUs: 1, GPUType: "v100"},
		},
		"mpirun and horovodrun": {
			script: newScript().Run("mpirun -np 4 -x NCCL_DEBUG=INFO python train_hvd.py --model resnet101 -b 32").
				Run("horovodrun -np 4 python other.py").Obj(),
			want: Features{Launcher: "mpirun", Program: "train_hvd.py", Model: "resnet101", ModelFrom: "flag", BatchSize: 32, GPUs: 4},
		},
		"global batch size and zero stage flag": {
			script: newScript().Run("torchrun --nnodes=2 --nproc_per_node=8 pretrain_gpt.py --global-batch-size 512 --micro-batch-size 2 --zero-stage 1 --seq-length 4096").Obj(),
			want: Features{Launcher: "torchrun", Program: "pretrain_gpt.py", Model: "gpt", ModelFrom: "path",
				BatchSize: 2, GlobalBatchSize: 512, SeqLen: 4096, ZeROStage: 1, GPUs: 16},
		},
		"gavel-style cd and main.py": {
			script: "cd /work/workloads/pytorch/image_classification/cifar10 && python3 main.py --data_dir=/d --batch_size 128\n",
			want:   Features{Launcher: "python", Program: "main.py", Model: "cifar10", ModelFrom: "path", BatchSize: 128},
		},
		"no launch command": {
			script: newScript().Sbatch("-p debug").Sbatch("-A proj1").Run("echo hello").Run("sleep 60").Obj(),
			want:   Features{Account: "proj1", Partition: "debug"},
		},
		"quoted arguments and semicolons": {
			script: newScript().Run(`cd run; python "train.py" --model="efficientnet_b0" --batch-size=48 --precision 16-mixed`).Obj(),
			want: Features{Launcher: "python", Program: "train.py", Model: "efficientnet_b0", ModelFrom: "flag",
				BatchSize: 48, Precision: "fp16"},
		},
		"a precision flag named for floating point": {
			script: newScript().Run(`python t5_gsm8k.py --batch_size 4 --epochs 2 --fp_precision 16 --model_name t5-base`).Obj(),
			want: Features{Launcher: "python", Program: "t5_gsm8k.py", Model: "t5-base", ModelFrom: "flag",
				BatchSize: 4, Epochs: 2, Precision: "fp16"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := ParseScript(tc.script).Features
			if diff := cmpDiff(tc.want, got); diff != "" {
				t.Errorf("features (-want +got):\n%s", diff)
			}
		})
	}
}

var gavelJobType = regexp.MustCompile(`^(.*?)(?: \(batch size (\d+)\))?$`)

// TestGavelCommands: every real command line of the Gavel traces yields its
// model and batch size. A job type names the model ("ResNet-50") and, when the
// command has one, the batch size; the parsed model must be the same for all
// lines of a job type and differ between job types, and the batch size must
// equal the job type's (or be absent when it names none).
func TestGavelCommands(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(shareddata.Path(t, "traces", "gavel"), "*.trace"))
	if len(files) == 0 {
		t.Skip("no gavel traces")
	}
	modelOf := map[string]string{} // job type model -> parsed model
	typeOf := map[string]string{}  // parsed model -> job type model
	lines := 0
	for _, file := range files {
		fh, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			cols := strings.Split(sc.Text(), "\t")
			if len(cols) < 2 {
				continue
			}
			lines++
			m := gavelJobType.FindStringSubmatch(cols[0])
			wantModel, wantBatch := m[1], 0.0
			if m[2] != "" {
				wantBatch, _ = strconv.ParseFloat(m[2], 64)
			}
			cmd := strings.ReplaceAll(cols[1], "%s", "/gavel")
			f := ParseScript(cmd).Features
			if f.Model == "" || f.BatchSize != wantBatch {
				t.Fatalf("%s: %q: model %q, batch %v; want a model and batch %v", filepath.Base(file), cmd, f.Model, f.BatchSize, wantBatch)
			}
			if prev, ok := modelOf[wantModel]; ok && prev != f.Model {
				t.Fatalf("job type %q parsed as both %q and %q", wantModel, prev, f.Model)
			}
			if prev, ok := typeOf[f.Model]; ok && prev != wantModel {
				t.Fatalf("model %q stands for both %q and %q", f.Model, prev, wantModel)
			}
			modelOf[wantModel], typeOf[f.Model] = f.Model, wantModel
		}
		fh.Close()
	}
	if modelOf["ResNet-50"] != "resnet50" {
		t.Errorf("ResNet-50 parsed as %q, want the --arch value resnet50", modelOf["ResNet-50"])
	}
	t.Logf("%d command lines, job types -> models: %v", lines, modelOf)
}

// FuzzFeatures: any script parses without panic, in bounded time.
func FuzzFeatures(f *testing.F) {
	f.Add(trainScript)
	f.Add("X=${Y:-${Z}} && torchrun --nproc_per_node python -m -m \\\n --bs=${X} '\"")
	f.Add("deepspeed --num_gpus 2 train.py --deepspeed zero --model")
	f.Add(script200)
	f.Add("cat > a.sh <<'E'\nbash a.sh $1\nsource a.sh\nE\nbash a.sh x\ncase a1 in a[0-9]) ;; esac\nCUDA_VISIBLE_DEVICES=,, python -c x\n")
	f.Add("f() { f \"$@\"; }\nf a b\na=(x \"${a[@]}\")\nbash -c \"eval \\\"$a\\\"\"\nsrun bash <<E\n$((1/0)) ${x:=${y:-$(z)}} ${#a[@]} ${a[-1]}\nE\n")
	f.Add("case $1 in a) M=x;; *) M=y;; esac\nif a; then args+=(--m x); fi\nsingularity exec --nv -B a:b i.sif tune run r --config llama3/8B x=1 ++m.name=gpt2")
	f.Add("B=8\nsbatch -J x --gres=gpu:a100:2 <<E\n#SBATCH -N 2\npython t.py --bs $B\nsbatch <<<\"$(cat j)\"\nE\nsbatch <<< \"#SBATCH -G1\"\n")
	f.Add("C=$(mktemp --suffix=.yaml)\ncat > $C <<Y\nbase_model: a/b\nbf16: auto\nz: {enabled: true}\nk: &a [*a]\nzero_optimization: {stage: 9}\nY\naxolotl train $C\nlm_eval --model_args pretrained=x,dtype=bf16\n")
	f.Fuzz(func(t *testing.T, s string) {
		feat := ParseScript(s).Features
		if feat.BatchSize < 0 || feat.GPUs < 0 {
			t.Fatalf("negative features %+v", feat)
		}
		if feat.Model != "" && !validModel(feat.Model) {
			t.Fatalf("model %q is a tool, an image or an unexpanded value", feat.Model)
		}
	})
}

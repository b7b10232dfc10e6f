package predictor

import (
	"math"
	"testing"
)

// TestWholeScripts: whole batch scripts in the styles sites write them, each
// mixing several of the patterns above, with what a person reads from them.
func TestWholeScripts(t *testing.T) {
	cases := featureCases{
		"array job over models with a case": {
			script: sh(`#SBATCH --job-name=sweep`, `#SBATCH --array=0-2`, `#SBATCH --gpus=v100:1`, `#SBATCH -p gpu`,
				`MODELS=(resnet18 resnet50 vit_b_16)`, `M=${MODELS[$SLURM_ARRAY_TASK_ID]}`,
				`python train.py --arch "$M" --batch-size 128 --amp`),
			want: Features{Launcher: "python", Program: "train.py", BatchSize: 128, Precision: "amp", GPUs: 1,
				GPUType: "v100", JobName: "sweep", Partition: "gpu", Unknown: []string{"model"}},
		},
		"array element by a literal index": {
			script: sh(`MODELS=(resnet18 resnet50)`, `python train.py --arch ${MODELS[1]}`),
			want:   Features{Launcher: "python", Program: "train.py", Model: "resnet50", ModelFrom: "flag"},
		},
		"mpirun into apptainer": {
			script: sh(`#SBATCH -N 4`, `#SBATCH --ntasks-per-node=4`, `#SBATCH --gres=gpu:4`, `module load openmpi`,
				`mpirun -np 16 --bind-to none -map-by slot -x NCCL_DEBUG -x LD_LIBRARY_PATH \`,
				`  apptainer exec --nv /containers/hvd.sif python train_hvd.py --model resnet152 --batch-size 32 --fp16-allreduce`),
			want: Features{Launcher: "mpirun", Program: "train_hvd.py", Model: "resnet152", ModelFrom: "flag", BatchSize: 32, GPUs: 16},
		},
		"deepspeed with a hostfile built in the script": {
			script: sh(`#SBATCH --nodes=2`, `#SBATCH --gres=gpu:8`, `scontrol show hostnames $SLURM_JOB_NODELIST | sed 's/$/ slots=8/' > hostfile`,
				`deepspeed --hostfile hostfile --num_nodes 2 --num_gpus 8 finetune.py \`,
				`  --model_name_or_path bigscience/bloom-3b --per_device_train_batch_size 1 --deepspeed ds_config_zero2.json --fp16`),
			want: Features{Launcher: "deepspeed", Program: "finetune.py", Model: "bigscience/bloom-3b", ModelFrom: "flag",
				BatchSize: 1, Precision: "fp16", ZeROStage: 2, GPUs: 16},
		},
		"JAX on one GPU with XLA flags": {
			script: sh(`#SBATCH --gres=gpu:a100:1`, `export XLA_PYTHON_CLIENT_MEM_FRACTION=.9`,
				`python -m big_vision.train --config big_vision/configs/vit_s16_i1k.py --workdir $SCRATCH/w`),
			want: Features{Launcher: "python", Program: "-m big_vision.train", Model: "vit-s16", ModelFrom: "config", GPUs: 1, GPUType: "a100"},
		},
		"TensorFlow with dtype": {
			script: sh(`#SBATCH --gpus=2`, `python official/vision/train.py --model_dir=/tmp/m --experiment=resnet_imagenet --params_override="runtime.mixed_precision_dtype=bfloat16"`,
				`python resnet_ctl_imagenet_main.py --num_gpus 2 --batch_size 256 --dtype fp16`),
			want: Features{Launcher: "python", Program: "resnet_ctl_imagenet_main.py", Model: "resnet", ModelFrom: "path",
				BatchSize: 256, Precision: "fp16", GPUs: 2},
		},
		"conda activate then accelerate with a config yaml": {
			script: sh(`source activate llm`, `cd $HOME/alignment-handbook`,
				`ACCELERATE_LOG_LEVEL=info accelerate launch --config_file recipes/accelerate_configs/deepspeed_zero3.yaml \`,
				`  scripts/run_sft.py recipes/zephyr-7b-beta/sft/config_full.yaml`),
			want: Features{Launcher: "accelerate", Program: "run_sft.py", Model: "zephyr-7b-beta", ModelFrom: "config", ZeROStage: 3},
		},
		"functions with a launcher variable and a heredoc config": {
			script: sh(`cat > cfg.yaml <<EOF`, `model: llama`, `EOF`,
				`launch() { srun --ntasks-per-node=1 "$@"; }`,
				`launch torchrun --nproc_per_node=4 --nnodes=2 train.py --model mistral-7b --micro_batch_size 2 --precision bf16-mixed`),
			want: Features{Launcher: "torchrun", Program: "train.py", Model: "mistral-7b", ModelFrom: "flag", BatchSize: 2,
				Precision: "bf16", GPUs: 8},
		},
		"uv in a container with Hydra": {
			script: sh(`#SBATCH --gpus-per-node=h100:4`, `srun --container-image=$IMG uv run --no-sync python -m src.train \`,
				`  experiment=pretrain model=gpt2_medium data.batch_size=16 trainer.precision=bf16-mixed trainer.devices=4`),
			want: Features{Launcher: "srun", Program: "-m src.train", Model: "gpt2_medium", ModelFrom: "flag", BatchSize: 16,
				Precision: "bf16", GPUs: 4, GPUType: "h100"},
		},
		"installs and checks before training": {
			script: sh(`python -m pip install -e .`, `python -c "import torch; print(torch.cuda.is_available())"`,
				`python setup.py build_ext --inplace`, `python -m torch.utils.collect_env`,
				`torchrun --nproc_per_node 2 train.py --model resnet50 --batch-size 64`),
			want: Features{Launcher: "torchrun", Program: "train.py", Model: "resnet50", ModelFrom: "flag", BatchSize: 64, GPUs: 2},
		},
		"data preparation before training": {
			script: sh(`python prepare_data.py --out /scratch/d --num-workers 16`,
				`srun python train.py --model_name_or_path t5-small --per_device_train_batch_size 64 --fp16`,
				`python evaluate.py --model_name_or_path /scratch/out --batch_size 256`),
			want: Features{Launcher: "srun", Program: "train.py", Model: "t5-small", ModelFrom: "flag", BatchSize: 64, Precision: "fp16"},
		},
		"nothing but a notebook": {
			script: sh(`#SBATCH --gres=gpu:1`, `jupyter lab --no-browser --port=8888`),
			want:   Features{GPUs: 1},
		},
	}
	runFeatureCases(t, cases)
}

func TestFamilyModel(t *testing.T) {
	for in, want := range map[string]string{
		"configs/llama2-7b.yaml":                      "llama2-7b",
		"examples/train_lora/llama3_lora_sft.yaml":    "llama3",
		"llama3_1/8B_lora":                            "llama3.1-8b",
		"config/train_gpt2.py":                        "gpt2",
		"recipes/zephyr-7b-beta/sft/config_full.yaml": "zephyr-7b-beta", // the release, beta, after the size
		"ft-mistral-7b-run3":                          "mistral-7b",
		"Llama-2-70b-chat":                            "llama-2-70b-chat",
		"mixtral_8x7b_instruct":                       "mixtral-8x7b-instruct",
		"resnet50_imagenet":                           "resnet50",
		"yolov8m_parcel":                              "yolov8m",
		"configs/efficient_net_b4.yaml":               "efficientnet-b4", // a family written as two words
		"conv_next_tiny":                              "convnext-tiny",
		"configs/train/vitg16/droid-256px-8f.yaml":    "vit-g16", // a ViT's size and patch run into its name
		"deits16_in1k":                                "deit-s16",
		"opts8":                                       "",
		"guardian_models/qwen_2_5_7B_lora_7500.yaml":  "qwen2.5-7b", // a version's two numbers written apart
		"llama_2_7b_chat":                             "llama-2-7b-chat",
		"train_unet_2":                                "unet", // a run's number: U-Nets have no second generation
		"bert_18":                                     "bert",
		"phi_2":                                       "phi-2", // Phi's generations are numbers written apart
		"alphafold_3":                                 "alphafold-3",
		"experiments/hrnet_w18.yaml":                  "hrnet-w18", // HRNet's width is its size
		"seg_hrnet_w48_train":                         "hrnet-w48",
		"eval_unet_t":                                 "unet", // a letter after a family no one sizes by a letter
		"swin_t":                                      "swin-t",
		"configs/bert_base_uncased.yaml":              "bert-base-uncased", // its vocabulary's case: two models
		"configs/latent-diffusion/celebahq-ldm-vq-4.yaml": "ldm-vq-4",              // an LDM by its first stage
		"configs/autoencoder/autoencoder_kl_8x8x64.yaml":  "autoencoder-kl-8x8x64", // the first stage itself, by its latent
		"LDM_p/train_unet3d":                              "unet3d",                // a 3D U-Net; ldm alone names no model
		"fno2d_darcy_test.py":                             "fno2d",                 // an architecture in as many dimensions
		"wa_imerg_convLSTM.py":                            "convlstm",
		"parametric_pinn_2d.py":                           "pinn",
		"inference_frcnn.py":                              "faster-rcnn", // a detector's short name
		"laion2b_s34b_b88k":                               "",            // a data set's samples, not a model's size
		"dense_net121":                                    "densenet121",
		"pres_net_small":                                  "", // "res" must begin a word
		"train_ZINC_270M_atomwise_LlamaTiny":              "llama-tiny",
		"grpo-multi-node-14b":                             "",
		"configs/vit_b16_extralong.yaml":                  "vit-b16",
		"BertLarge_squad":                                 "bert-large",
		"dino_v3_test":                                    "dino-v3", // a family's release
		"convnext_v2_tiny":                                "convnext-v2-tiny",
		"roberta-v1":                                      "roberta", // the run's version
		"llama3_v2_run":                                   "llama3",
		"config/model/vit_mae/vit_mae.yaml":               "vit-mae",
		"fine_tune_nllb_huggingface":                      "nllb",
		"paraphrase-mpnet-base-v2":                        "mpnet-base",
		"inference_Qwen2VL_Instruct_7B":                   "qwen2-vl-7b-instruct", // the tuning before the size
		"mymodel-350m":                                    "mymodel-350m",
		"recipes/llama-3/sft/config_70b_eng.yaml":         "llama-3-70b",
		"recipes/llama-3/sft/config_8b_vs_70b.yaml":       "llama-3",
		// A family's directory holding one of its models' directories.
		"recipes/qwen/Qwen2.5-3B-Instruct/grpo/config_full.yaml": "qwen2.5-3b-instruct",
		"t5x/examples/t5/t5-base/pretrain.gin":                   "t5-base",
		"configs/llama/mistral-7b/sft.yaml":                      "mistral-7b", // a sized model over a bare family word
		"t5x/examples/t5/t5_1_1/base.gin":                        "t5",         // a version, no size
		"recipes/llama-3/dpo/config_helpsteer3_eng_fin_8b.yaml":  "llama-3-8b", // a file's sized word no family's
		// A family's bare word, then another's sized model, in one name.
		"finetune_hubert_xtralarge_linear_vicuna_7b.sh": "vicuna-7b",
		"examples/config_smollm_qwen_1b.yaml":           "qwen-1b",
		"Train YOLOv8-small":                            "yolov8s",
		"yolo11n-seg.yaml":                              "yolo11n-seg",
		"yolov5l6":                                      "yolov5l6",
		"myrun":                                         "",
		"run-42":                                        "",
		"optimizer_sweep":                               "",
		"${CFG}/llama2-7b.yaml":                         "llama2-7b",
		"${CFG}.yaml":                                   "",
		"train-3b":                                      "",
		"gpt3-1.3b-pretrain":                            "gpt3-1.3b",
		"train_configs/smollm3B.toml":                   "smollm3b",
		"llama-3.1-8b-RU-finetune":                      "llama-3.1-8b",
		"config/Qwen2.5-VL-3B-Instruct.yaml":            "qwen2.5-vl-3b-instruct",
		"tunalm/configs/1B_sft.yaml":                    "",
		"bdc-1.0-100m":                                  "bdc-1.0-100m",
		"Qwen25-7B-VL-Train":                            "qwen2.5-vl-7b",
		"configs/lora_medgemma27b.yaml":                 "medgemma-27b",
		"finetune-ministral3b":                          "ministral-3b",
		"exp3b":                                         "",
		"sweep_run1b":                                   "",
		"saves/qwen25vl-7b":                             "qwen2.5-vl-7b",
		"examples/train_full/qwen2_5vl_full_sft.yaml":   "qwen2.5-vl",
		"llama31-8b-lora":                               "llama3.1-8b",
		"qwen2.5-7b-chat":                               "qwen2.5-7b-chat",
		"DeepSeek-R1-Distill-Qwen-1.5B":                 "deepseek-r1-distill-qwen-1.5b",
		"deepseek-v3":                                   "deepseek-v3",
		// Detection and segmentation configs: architecture, backbone, neck.
		"configs/COCO-InstanceSegmentation/mask_rcnn_R_50_FPN_3x.yaml":          "mask-rcnn-r50-fpn",
		"configs/COCO-Detection/faster_rcnn_R_101_FPN_3x.yaml":                  "faster-rcnn-r101-fpn",
		"configs/faster_rcnn/faster-rcnn_r50_fpn_1x_coco.py":                    "faster-rcnn-r50-fpn",
		"configs/mask2former/mask2former_swin-s-p4-w7-224_8xb2-lsj-50e_coco.py": "mask2former-swin-s",
		"configs/cascade_rcnn/cascade-mask-rcnn_x101-32x4d_fpn_1x_coco.py":      "cascade-mask-rcnn-x101-32x4d-fpn",
		"configs/yolox/yolox_s_8xb8-300e_coco.py":                               "yolox-s",
		"configs/upernet/upernet_r50_4xb4-80k_ade20k-512x512.py":                "upernet-r50",
		"configs/deformable_detr/deformable-detr_r50_16xb2-50e_coco.py":         "deformable-detr-r50",
		"configs/retinanet/retinanet_r101_fpn_1x_coco.py":                       "retinanet-r101-fpn",
		"configs/detr/detr_r50_8xb2-150e_coco.py":                               "detr-r50",
		"configs/misc/panoptic_fpn_R_101_dconv_cascade_gn_3x.yaml":              "panoptic-fpn-r101",
		"configs/dino/dino-4scale_r50_8xb2-12e_coco.py":                         "dino",
		"maskrcnn_resnet50_fpn":                                                 "maskrcnn-resnet50-fpn",
		// A family word inside a project directory's name is the project's.
		"/home/u/git/UCF-VIT/configs/xct/diffusion/base_config_dgx.yaml": "",
		"examples/roberta/config/pretraining":                            "roberta",
	} {
		if got := familyModel(in); got != want {
			t.Errorf("familyModel(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestNamesSitesUse: the model, type and precision as sites' scripts spell
// them outside the launch's own flags: the hub cache's directory, a gin
// file, an accelerate config named for its precision, a GPU type given
// alone or by its GeForce number, and job names that name a method, not a
// model.
func TestNamesSitesUse(t *testing.T) {
	cases := featureCases{
		"a snapshot in the hub cache": {
			script: sh(`#SBATCH --gres=gpu:1`,
				`python embed.py --model $HOME/.cache/huggingface/hub/models--facebook--esm2_t33_650M_UR50D/snapshots/0123456789abcdef0123456789abcdef01234567/`),
			want: Features{Launcher: "python", Program: "embed.py", Model: "facebook/esm2_t33_650m_ur50d", ModelFrom: "flag", GPUs: 1},
		},
		"a snapshot's hash alone is no model": {
			script: sh(`python train.py --model /ckpt/0123456789abcdef0123456789abcdef01234567`),
			want:   Features{Launcher: "python", Program: "train.py"},
		},
		"a gin file names the model": {
			script: sh(`#SBATCH -J base_t5`, `#SBATCH --gpus=1`, `srun python finetune.py --gin t5x/gin/t5-large.gin`),
			want: Features{Launcher: "srun", Program: "finetune.py", Model: "t5-large", ModelFrom: "config", GPUs: 1,
				JobName: "base_t5"},
		},
		"accelerate's config named for its precision": {
			script: sh(`#SBATCH --gres=gpu:2`, `accelerate launch --config_file cfg/fsdp_bf16.yaml train.py --model_name_or_path gpt2`),
			want:   Features{Launcher: "accelerate", Program: "train.py", Model: "gpt2", ModelFrom: "flag", Precision: "bf16", GPUs: 2},
		},
		"a GPU type given alone": {
			script: sh(`#SBATCH --gpus=a100-80`, `python train.py --model resnet50`),
			want: Features{Launcher: "python", Program: "train.py", Model: "resnet50", ModelFrom: "flag", GPUs: 1,
				GPUType: "a100-80"},
		},
		"a GeForce number as a feature": {
			script: sh(`#SBATCH -C 2080ti`, `#SBATCH --gres=gpu:1`, `python train.py --model resnet18`),
			want:   Features{Launcher: "python", Program: "train.py", Model: "resnet18", ModelFrom: "flag", GPUs: 1, GPUType: "rtx2080ti"},
		},
		"a GeForce number as a partition": {
			script: sh(`#SBATCH -p 4090`, `#SBATCH --gres=gpu:1`, `python train.py --model resnet18`),
			want: Features{Launcher: "python", Program: "train.py", Model: "resnet18", ModelFrom: "flag", GPUs: 1, GPUType: "rtx4090",
				Partition: "4090"},
		},
		"a job named for its method and size": {
			script: sh(`#SBATCH -J fsdp_13b`, `#SBATCH --gpus=8`, `srun bash run.sh`),
			want:   Features{Launcher: "srun", Program: "run.sh", GPUs: 8, JobName: "fsdp_13b"},
		},
		"a job named for a family alone names its workload, no model": {
			script: sh(`#SBATCH -J mistral_sweep`, `#SBATCH --gpus=1`, `python train.py`),
			want: Features{Launcher: "python", Program: "train.py", Model: "mistral", ModelFrom: "path", GPUs: 1,
				JobName: "mistral_sweep"},
		},
		"a job's name names the program directory's word more closely": {
			script: sh(`#SBATCH --job-name=FinetuneSwissBert`, `python finetune_bert/finetune.py`),
			want:   Features{Launcher: "python", Program: "finetune.py", Model: "swissbert", ModelFrom: "path", JobName: "FinetuneSwissBert"},
		},
		"a job named for a family and its run's counter": {
			script: sh(`#SBATCH -J train_bert_1`, `#SBATCH --gpus=1`, `python train.py`),
			want: Features{Launcher: "python", Program: "train.py", Model: "bert", ModelFrom: "path", GPUs: 1,
				JobName: "train_bert_1"},
		},
		"a job named for a family's version": {
			script: sh(`#SBATCH -J sft_llama_3`, `#SBATCH --gpus=1`, `python train.py`),
			want: Features{Launcher: "python", Program: "train.py", Model: "llama-3", ModelFrom: "job_name", GPUs: 1,
				JobName: "sft_llama_3"},
		},
		"a job named for a versioned model": {
			script: sh(`#SBATCH -J train_sam2`, `#SBATCH --gpus=1`, `python train.py`),
			want: Features{Launcher: "python", Program: "train.py", Model: "sam2", ModelFrom: "job_name", GPUs: 1,
				JobName: "train_sam2"},
		},
		"a hub id alone, positional": {
			script: sh(`#SBATCH --gres=gpu:1`, `./venv/bin/python score.py facebook/esm2_t12_35M_UR50D 16`),
			want: Features{Launcher: "python", Program: "score.py", Model: "facebook/esm2_t12_35m_ur50d", ModelFrom: "flag",
				GPUs: 1},
		},
		"a data file positional is no hub id": {
			script: sh(`python train.py data/train.jsonl`),
			want:   Features{Launcher: "python", Program: "train.py"},
		},
		"a positional path to a directory named for a model and its size": {
			script: sh(`bash train_eagle3.sh /home/me/models/Llama-3.1-8B-Instruct /home/me/dataset`),
			want:   Features{Program: "train_eagle3.sh", Model: "llama-3.1-8b-instruct", ModelFrom: "flag"},
		},
		"a positional data file or a family's directory without a size names no model": {
			script: sh(`python train.py /data/qwen2.5-7b-generations.jsonl outputs/llama`),
			want:   Features{Launcher: "python", Program: "train.py"},
		},
		"CSC's singularity_wrapper runs the launch": {
			script: sh(`#SBATCH --gres=gpu:v100:4`, `srun singularity_wrapper exec python train.py --model resnet50 --amp bf16`),
			want: Features{Launcher: "srun", Program: "train.py", Model: "resnet50", ModelFrom: "flag", Precision: "bf16", GPUs: 4,
				GPUType: "v100"},
		},
		"a switch named for its dtype, and bert_model": {
			script: sh(`python run_squad.py --bert_model bert-base-cased --train_batch_size 12 trainer.is_use_bf16=True`),
			want: Features{Launcher: "python", Program: "run_squad.py", Model: "bert-base-cased", ModelFrom: "flag",
				BatchSize: 12, Precision: "bf16"},
		},
		"res18 is a ResNet-18": {
			script: sh(`python pirl.py --model-type res18 --local_micro_batch_size 32`),
			want:   Features{Launcher: "python", Program: "pirl.py", Model: "resnet18", ModelFrom: "flag", BatchSize: 32},
		},
		"a module's package names the model": {
			script: sh(`python -m src.models.mask_rcnn.train`),
			want:   Features{Launcher: "python", Program: "-m src.models.mask_rcnn.train", Model: "mask-rcnn", ModelFrom: "program"},
		},
		"a job named for a generation alone names its workload, no model": {
			script: sh(`#SBATCH -J lora_qwen2.5`, `python train.py`),
			want:   Features{Launcher: "python", Program: "train.py", Model: "qwen2.5", ModelFrom: "path", JobName: "lora_qwen2.5"},
		},
		"a size run into a job name's family, with a decimal point": {
			script: sh(`#SBATCH -J Bert3.9b_160gpu_bigrun`, `python pretrain_bert.py --num-layers 48`),
			want: Features{Launcher: "python", Program: "pretrain_bert.py", Model: "bert3.9b", ModelFrom: "job_name",
				JobName: "Bert3.9b_160gpu_bigrun"},
		},
		"the job's name and the launch's arguments agree": {
			script: sh(`#SBATCH -J ddppo`, `srun python -u -m habitat_baselines.run --config-name=pointnav/ddppo_pointnav.yaml`),
			want: Features{Launcher: "srun", Program: "-m habitat_baselines.run", Model: "ddppo", ModelFrom: "path",
				JobName: "ddppo"},
		},
		"a flag's name or a run's name is no agreement": {
			script: sh(`#SBATCH -J glove_ablation`, `srun python -u -m habitat_baselines.run --use-glove False --run_name glove`),
			want: Features{Launcher: "srun", Program: "-m habitat_baselines.run", Model: "habitat_baselines", ModelFrom: "path",
				JobName: "glove_ablation"},
		},
		"a quoted #SBATCH value": {
			script: sh(`#SBATCH --gpus-per-node="a40:8"`, `#SBATCH --partition="lab"`, `python train.py --model resnet50`),
			want: Features{Launcher: "python", Program: "train.py", Model: "resnet50", ModelFrom: "flag", GPUs: 8, GPUType: "a40",
				Partition: "lab"},
		},
		"fairseq found with which": {
			script: sh(`#SBATCH --gres=gpu:4`, `MAX_SENTENCES=8`,
				`$(which fairseq-train) data-bin --arch roberta_large --max-sentences $MAX_SENTENCES --memory-efficient-fp16`),
			want: Features{Launcher: "python", Program: "fairseq-train", Model: "roberta_large", ModelFrom: "flag", BatchSize: 8,
				Precision: "fp16", GPUs: 4},
		},
		"mixed precision turned off": {
			script: sh(`#SBATCH -J FT-Pegasus-Large-news`, `python train.py --train_batch_size 16 --fp16 false`),
			want: Features{Launcher: "python", Program: "train.py", Model: "pegasus-large", ModelFrom: "job_name", BatchSize: 16,
				Precision: "fp32", JobName: "FT-Pegasus-Large-news"},
		},
		"a hub id of a family's kind under a flag no reader knows": {
			script: sh(`#SBATCH -p gpu-rtx6k`, `#SBATCH --gpus=1`, `python extract.py --hf_name 'EleutherAI/gpt-neo-125m'`),
			want: Features{Launcher: "python", Program: "extract.py", Model: "eleutherai/gpt-neo-125m", ModelFrom: "flag", GPUs: 1,
				GPUType: "rtx6000", Partition: "gpu-rtx6k"},
		},
		"a tokenizer's data file is no model": {
			script: sh(`python pretrain_gpt.py --merge-file data/gpt2-merges.txt --vocab-file data/gpt2-vocab.json`),
			want:   Features{Launcher: "python", Program: "pretrain_gpt.py", Model: "gpt", ModelFrom: "path"},
		},
		"a checkpoint directory is no hub id": {
			script: sh(`python finetune.py --pretrained checkpoints/best`),
			want:   Features{Launcher: "python", Program: "finetune.py"},
		},
		"a run's final weights are no hub id, whatever directory holds them": {
			script: sh(`torchrun --standalone --nproc_per_node=8 eval_model.py --model repo/final_model.int8.ptz`),
			want:   Features{Launcher: "torchrun", Program: "eval_model.py", GPUs: 8},
		},
		"the weights file every checkpoint directory holds names no model": {
			script: sh(`python finetune.py --base_model /scratch/ltu/exp/stage3/checkpoint-6000/pytorch_model.bin --batch_size 4`),
			want:   Features{Launcher: "python", Program: "finetune.py", BatchSize: 4},
		},
		"a local model name's method words are the run's, not the model's": {
			script: sh(`export MODEL_NAME="llama2_70b_lora"`, `python train.py`),
			want:   Features{Launcher: "python", Program: "train.py", Model: "llama2_70b", ModelFrom: "env"},
		},
		"a hub id keeps the method word its name has": {
			script: sh(`python dpo.py --model_name_or_path allenai/Llama-3.1-Tulu-3-8B-SFT`),
			want:   Features{Launcher: "python", Program: "dpo.py", Model: "allenai/llama-3.1-tulu-3-8b-sft", ModelFrom: "flag"},
		},
		"a mixed-precision switch after its dtype keeps the dtype": {
			script: sh(`python train.py --bf16 --mixed-precision --micro-batch-size 2`),
			want:   Features{Launcher: "python", Program: "train.py", BatchSize: 2, Precision: "bf16"},
		},
		"a script that stages data on each node is not the launch": {
			script: sh(`#SBATCH -N 2`, `#SBATCH -n 16`, `srun --ntasks-per-node=1 ./copy-data.sh /scratch/in /tmp/in`,
				`mpirun -np $SLURM_NTASKS singularity exec --nv img.sif bash ./run_and_time.sh`),
			want: Features{Launcher: "mpirun", Program: "run_and_time.sh", GPUs: 16},
		},
		"a version after the program's name is part of the name": {
			script: sh(`python $PYTHONPATH/sota-implementations/dreamer_v3/dreamer_v3.py env.name=cheetah`),
			want:   Features{Launcher: "python", Program: "dreamer_v3.py", Model: "dreamer_v3", ModelFrom: "path"},
		},
		"the project a program is in, named for a versioned model": {
			script: sh(`#SBATCH --gres=gpu:l40s:4`, `python dinov2/run/eval/linear.py --ngpus 4 --batch-size 256`),
			want: Features{Launcher: "python", Program: "linear.py", Model: "dinov2", ModelFrom: "path", GPUs: 4, GPUType: "l40s",
				BatchSize: 256},
		},
		"a job's name cut short of the program's": {
			script: sh(`#SBATCH --job-name=speechtoken_test`, `#SBATCH --gres=gpu:a100:1`, `python train_speechtokenizer.py --config config/spt_base_cfg.json`),
			want: Features{Launcher: "python", Program: "train_speechtokenizer.py", Model: "speechtokenizer", ModelFrom: "path",
				GPUs: 1, GPUType: "a100", JobName: "speechtoken_test"},
		},
		"a name's first word run into the rest is the name's (FastSpeech2)": {
			script: sh(`#SBATCH --job-name=GlowTTS2-Train`, `python3 train.py -p config/LJSpeech/preprocess.yaml`),
			want:   Features{Launcher: "python", Program: "train.py", Model: "glowtts2", ModelFrom: "path", JobName: "GlowTTS2-Train"},
		},
		"a truncated word is no name of its own (FineTu)": {
			script: sh(`#SBATCH -J FineTu`, `python -u ./finetune.py --seed 3`),
			want:   Features{Launcher: "python", Program: "finetune.py", JobName: "FineTu"},
		},
		"a config's batch of all GPUs is split over every node's": {
			script: sh(`#SBATCH --nodes=2`, `srun -N 1 -n 1 python -m torch.distributed.launch --nproc_per_node=8 --nnodes=2 train.py --config=configs/vit_bs2048.yml`),
			want:   Features{Launcher: "torchrun", Program: "train.py", Model: "vit", ModelFrom: "config", BatchSize: 128, GPUs: 16},
		},
		"detectron2's batch is split over every machine's GPUs": {
			script: sh(`#SBATCH --nodes=2`, `srun python train_net.py --config-file configs/mask_rcnn_R_50_FPN_3x.yaml --num-gpus 8 --num-machines 2 SOLVER.IMS_PER_BATCH 64`),
			want:   Features{Launcher: "srun", Program: "train_net.py", Model: "mask-rcnn-r50-fpn", ModelFrom: "config", BatchSize: 4, GPUs: 16},
		},
		"a wrapper script that runs its arguments": {
			script: sh(`#SBATCH --gres=gpu:2`, `srun /bin/bash run-in-container.bash /bin/bash -c 'python -u src/main.py --model="vit_base_patch16_224" --batch-size=64'`),
			want: Features{Launcher: "srun", Program: "main.py", Model: "vit_base_patch16_224", ModelFrom: "flag", BatchSize: 64,
				GPUs: 2},
		},
		"a model's name under a flag no reader knows": {
			script: sh(`python src/main.py --resnet_type=resnet34 --tokenizer gpt2 --batch_size=256`),
			want:   Features{Launcher: "python", Program: "main.py", Model: "resnet34", ModelFrom: "flag", BatchSize: 256},
		},
		"the output directory names a sized model, as a path": {
			script: sh(`python scripts/train_lora.py --output checkpoints/lora-mistral-7b --batch-size 1`),
			want:   Features{Launcher: "python", Program: "train_lora.py", Model: "mistral-7b", ModelFrom: "path", BatchSize: 1},
		},
		"the job name gives the variant of the flag's model": {
			script: sh(`#SBATCH --job-name=gpt2-large`, `python run.py +models=gpt2 data.batch_size=4`),
			want: Features{Launcher: "python", Program: "run.py", Model: "gpt2-large", ModelFrom: "job_name", BatchSize: 4,
				JobName: "gpt2-large"},
		},
		"the job name sizes the config's family": {
			script: sh(`#SBATCH -J Mistral-7B-Instruct_lr1e-5`, `#SBATCH --gres=gpu:4`,
				`accelerate launch src/train.py configs/mistral_full_sft.yaml`),
			want: Features{Launcher: "accelerate", Program: "train.py", Model: "mistral-7b-instruct", ModelFrom: "job_name", GPUs: 4,
				JobName: "Mistral-7B-Instruct_lr1e-5"},
		},
		"a local copy of a model under a flag no reader knows": {
			script: sh(`python ../scripts/finetune.py --model_dir /proj/shared/weights/Llama-2-13b-chat-hf --data_dir data/ --micro_batch_size 2`),
			want:   Features{Launcher: "python", Program: "finetune.py", Model: "llama-2-13b-chat-hf", ModelFrom: "flag", BatchSize: 2},
		},
		"a teacher's copy is not the model trained; the student is": {
			script: sh(`python distill.py --teacher_model_dir /models/Llama-2-13b-hf --student llama-2-7b --batch_size 8`),
			want:   Features{Launcher: "python", Program: "distill.py", Model: "llama-2-7b", ModelFrom: "flag", BatchSize: 8},
		},
		"where a model is saved is not where it is read": {
			script: sh(`python train.py --output_model_dir /scratch/run3/llama-2-7b-hf --batch_size 4`),
			want:   Features{Launcher: "python", Program: "train.py", BatchSize: 4},
		},
		"the program names the family, a flag its size": {
			script: sh(`srun python scripts/train_roberta_mlm.py --preset large --batch_size 32`),
			want:   Features{Launcher: "srun", Program: "train_roberta_mlm.py", Model: "roberta-large", ModelFrom: "program", BatchSize: 32},
		},
		"a sourced script run with arguments sees every variable": {
			script: sh(`#SBATCH --gpus=1`, `MODEL_NAME=Qwen2.5-3B-Instruct`, `source ./jobs/sft.sh "$SCRATCH/$MODEL_NAME" out/ 3`),
			want:   Features{Program: "sft.sh", Model: "qwen2.5-3b-instruct", ModelFrom: "env", GPUs: 1},
		},
		"a sourced setup script is not the launch": {
			script: sh(`source ./setup_cluster_env.sh`, `MODEL=llama-3-8b`, `python train.py --batch_size 2`),
			want:   Features{Launcher: "python", Program: "train.py", BatchSize: 2},
		},
		"Megatron's shape says which GPT-2 the job name means": {
			script: sh(`#SBATCH -J gpt2-pretrain`, `torchrun pretrain_gpt.py --num-layers 36 --hidden-size 1280 --num-attention-heads 20 --micro-batch-size 2`),
			want: Features{Launcher: "torchrun", Program: "pretrain_gpt.py", Model: "gpt2-large", ModelFrom: "job_name", BatchSize: 2,
				JobName: "gpt2-pretrain", Layers: 36, Hidden: 1280, Params: 12 * 36 * 1280 * 1280, ParamsFrom: "shape"},
		},
		"nnU-Net's trainer trains nnU-Net": {
			script: sh(`#SBATCH --gres=gpu:1`, `nnUNetv2_train Dataset017 3d_fullres 0 --npz`),
			want:   Features{Launcher: "python", Program: "nnUNetv2_train", Model: "nnunet", ModelFrom: "program", GPUs: 1},
		},
		"a shell script named for a sized model runs it": {
			script: sh(`#SBATCH --gres=gpu:4`, `bash $REPO/examples/gpt/pretrain/ds_pretrain_gpt_1.3B_dense_run.sh`),
			want:   Features{Program: "ds_pretrain_gpt_1.3B_dense_run.sh", Model: "gpt-1.3b", ModelFrom: "program", GPUs: 4},
		},
		"a shell script named for a family's variant runs it": {
			script: sh(`#SBATCH --gpus=1`, `./hf_models/scripts/train_calflow_t5_large.sh`),
			want:   Features{Program: "train_calflow_t5_large.sh", Model: "t5-large", ModelFrom: "program", GPUs: 1},
		},
		"a shell script named for a bare family is not the launch": {
			script: sh(`bash scripts/setup_llama.sh`, `python train.py --model resnet50`),
			want:   Features{Launcher: "python", Program: "train.py", Model: "resnet50", ModelFrom: "flag"},
		},
		"a shell script named for nothing is not the launch": {
			script: sh(`bash scripts/prepare_data.sh`, `python train.py --model resnet50`),
			want:   Features{Launcher: "python", Program: "train.py", Model: "resnet50", ModelFrom: "flag"},
		},
		"a weights file named for its model": {
			script: sh(`python train.py --weights yolov7_training.pt --batch-size 32`),
			want:   Features{Launcher: "python", Program: "train.py", Model: "yolov7", ModelFrom: "flag", BatchSize: 32},
		},
		"a switch is no model": {
			script: sh(`yolo detect train data=d.yaml model=yolov8s.pt batch=16 pretrained=False`),
			want:   Features{Launcher: "python", Program: "yolo detect train", Model: "yolov8s", ModelFrom: "flag", BatchSize: 16},
		},
		"a size alone is no model": {
			script: sh(`python -m main model=small loader.batch_size=8`),
			want:   Features{Launcher: "python", Program: "-m main", BatchSize: 8},
		},
		"EfficientNet's and SegFormer's scales": {
			script: sh(`python train.py --config configs/segformer_b2_ade20k_512.py --batch_size 4`),
			want:   Features{Launcher: "python", Program: "train.py", Model: "segformer-b2", ModelFrom: "config", BatchSize: 4},
		},
		"detectron2 splits its images over --num-gpus": {
			script: sh(`python tools/train_net.py --num-gpus 4 --config-file configs/retinanet_R_50_FPN_1x.yaml SOLVER.IMS_PER_BATCH 16 SOLVER.AMP.ENABLED True OUTPUT_DIR out/llama-7b`),
			want: Features{Launcher: "python", Program: "train_net.py", Model: "retinanet-r50-fpn", ModelFrom: "config", BatchSize: 4,
				Precision: "amp", GPUs: 4},
		},
		"a program's own batch variable, exported": {
			script: sh(`export VJEDAI_BATCH_SIZE="${VJEDAI_BATCH_SIZE:-2}"`, `export VJEDAI_EVAL_BATCH_SIZE=16`, `python train_vjedai.py --epochs 10`),
			want:   Features{Launcher: "python", Program: "train_vjedai.py", Model: "vjedai", ModelFrom: "path", BatchSize: 2, Epochs: 10},
		},
		"two programs' batch variables that disagree say none": {
			script: sh(`export A_BATCH_SIZE=2 B_BATCH_SIZE=4`, `python train.py --epochs 10`),
			want:   Features{Launcher: "python", Program: "train.py", Epochs: 10},
		},
		"gpu entries of two types in one --gres add up, of no one type": {
			script: sh(`#SBATCH --gres=gpu:a40:4,gpu:rtx3090:1`, `python train.py --model resnet50`),
			want:   Features{Launcher: "python", Program: "train.py", Model: "resnet50", ModelFrom: "flag", GPUs: 5},
		},
		"a program's two-letter word is a mode, and the job's name names the work": {
			script: sh(`#SBATCH -J vit-era5-mp`, `#SBATCH --gres=gpu:4`, `srun python train_mp.py --config base`),
			want:   Features{Launcher: "srun", Program: "train_mp.py", Model: "vit", ModelFrom: "path", GPUs: 4, JobName: "vit-era5-mp"},
		},
		"a local copy of a pretrained language model under --plm_path": {
			script: sh(`python main.py --plm_path /data/plms/bert-base-uncased --train_batch_size 8 --eval_batch_size 8`),
			want:   Features{Launcher: "python", Program: "main.py", Model: "bert-base-uncased", ModelFrom: "flag", BatchSize: 8},
		},
		"one program run on several models in turn runs none of them alone": {
			script: sh(`#SBATCH --gres=gpu:1`, `python src/train.py --model alexnet --epochs 10`, `python src/train.py --model resnet18 --epochs 10`,
				`python src/train.py --model densenet121 --epochs 10`),
			want: Features{Launcher: "python", Program: "train.py", GPUs: 1, Epochs: 10, Unknown: []string{"model"}},
		},
		"the same model trained then evaluated is the job's": {
			script: sh(`#SBATCH --gres=gpu:1`, `python train.py --model resnet18 --epochs 10`, `python train.py --model resnet18 --eval`),
			want:   Features{Launcher: "python", Program: "train.py", Model: "resnet18", ModelFrom: "flag", GPUs: 1, Epochs: 10},
		},
		"a hub id of a family's fine-tune under a checkpoint's flag": {
			script: sh(`#SBATCH --gres=gpu:1`, `python3 -u ./eval.py --dataset ./cache --checkpoint google/pegasus-cnn_dailymail --epoch cnndm`),
			want:   Features{Launcher: "python", Program: "eval.py", Model: "google/pegasus-cnn_dailymail", ModelFrom: "flag", GPUs: 1},
		},
		"a checkpoint directory named for a family's fine-tune is where the job writes": {
			script: sh(`#SBATCH --gres=gpu:1`, `python3 train.py --ckpt_dir exp1/bert-finetune --save_checkpoint exp1/bert-best`),
			want:   Features{Launcher: "python", Program: "train.py", GPUs: 1},
		},
		"ColabFold's batch runner names the AlphaFold model it runs by --model-type": {
			script: sh(`#SBATCH --gres=gpu:a40:1`, `conda activate colabfold`,
				`colabfold_batch "$1" results --model-type alphafold2_multimer_v3 --num-recycle 20`),
			want: Features{Launcher: "python", Program: "colabfold_batch", Model: "alphafold2_multimer_v3", ModelFrom: "flag", GPUs: 1,
				GPUType: "a40"},
		},
		"a framework's name before a program's own word is no model": {
			script: sh(`#SBATCH --gres=gpu:a100:1`, `#SBATCH --job-name=monai`, `python3 /mnt/monai_train_domino.py --num_gpu 1 --max_iteration 100`),
			want: Features{Launcher: "python", Program: "monai_train_domino.py", Model: "domino", ModelFrom: "path", GPUs: 1,
				GPUType: "a100", JobName: "monai"},
		},
		"ollama runs the model it is given, tag and all": {
			script: sh(`#SBATCH --gres=gpu:1`, `export OLLAMA_MODELS=/scratch/$USER/ollama`, `ollama serve &`, `sleep 5`, `ollama run llava:34b`),
			want:   Features{Launcher: "python", Program: "ollama run", Model: "llava-34b", ModelFrom: "flag", GPUs: 1},
		},
		"ollama's latest tag is no part of the model's name": {
			script: sh(`#SBATCH --gres=gpu:1`, `ollama pull llama3.1:latest`),
			want:   Features{Launcher: "python", Program: "ollama pull", Model: "llama3.1", ModelFrom: "flag", GPUs: 1},
		},
		"ollama's tag holds the weights' quantisation": {
			script: sh(`#SBATCH --gres=gpu:1`, `ollama pull llama3.1:8b-instruct-q4_K_M`),
			want:   Features{Launcher: "python", Program: "ollama pull", Model: "llama3.1-8b-instruct", ModelFrom: "flag", GPUs: 1},
		},
		"a variable a container's --env sets names the model, an ollama tag in it": {
			script: sh(`#SBATCH --gres=gpu:1`,
				`apptainer exec --nv --env OLLAMA_HOST=localhost:11434 --env MODEL_NAME=qwen2.5:7b-instruct-q8_0 rag.sif python run_eval.py`),
			want: Features{Launcher: "python", Program: "run_eval.py", Model: "qwen2.5-7b-instruct", ModelFrom: "env", GPUs: 1},
		},
		"docker's -e sets the command's variables": {
			script: sh(`#SBATCH --gres=gpu:2`, `docker run --rm --gpus all -e MODEL=meta-llama/Llama-3.1-8B -e HF_TOKEN img python finetune.py`),
			want:   Features{Launcher: "python", Program: "finetune.py", Model: "meta-llama/llama-3.1-8b", ModelFrom: "env", GPUs: 2},
		},
		"llama.cpp's server given a GGUF file by -m, its directory hidden": {
			script: sh(`#SBATCH -G 4`, `cd /local/$USER/llama.cpp/`, `./server -m /local/$USER/llama.cpp/models/llama-2-7b-chat.Q4_K_M.gguf -c 1024 -ngl 35`),
			want:   Features{Launcher: "python", Program: "server", Model: "llama-2-7b-chat", ModelFrom: "flag", GPUs: 4},
		},
		"llama-cli's GGUF file named with an importance-matrix quantisation": {
			script: sh(`#SBATCH --gres=gpu:a100:1`, `llama-cli --model models/Meta-Llama-3-8B-Instruct-IQ2_XS.gguf -p "hello" -n 128`),
			want: Features{Launcher: "python", Program: "llama-cli", Model: "meta-llama-3-8b-instruct", ModelFrom: "flag", GPUs: 1,
				GPUType: "a100"},
		},
		"llama.cpp's converter's default file names no model": {
			script: sh(`#SBATCH --gres=gpu:1`, `./main -m models/7B/ggml-model-q4_0.gguf -p "hello"`),
			want:   Features{Launcher: "python", Program: "main", GPUs: 1},
		},
		"a dotted Python path names its class": {
			script: sh(`#SBATCH --gres=gpu:4`, `python m2m.py train --in-norms cosmology.dis --model vnet.VNet --batches 2`),
			want:   Features{Launcher: "python", Program: "m2m.py", Model: "vnet", ModelFrom: "flag", GPUs: 4},
		},
		"an activation function under -a is no architecture": {
			script: sh(`#SBATCH --job-name=DGBaN_training`, `#SBATCH --gres=gpu:1`,
				`python3 training/train_bayesian_model.py -t multi_random -a sigmoid -e 1000 -b 32`),
			want: Features{Launcher: "python", Program: "train_bayesian_model.py", Model: "dgban", ModelFrom: "path", BatchSize: 32,
				GPUs: 1, JobName: "DGBaN_training"},
		},
		"a program named for what it computes leaves the clone's name": {
			script: sh(`#SBATCH --gres=gpu:1`, `#SBATCH --job-name=gpu-job`, `cd $SCRATCH/$USER/SimCLR`, `python feature_eval.py`),
			want:   Features{Launcher: "python", Program: "feature_eval.py", Model: "simclr", ModelFrom: "path", GPUs: 1, JobName: "gpu-job"},
		},
		"a PySlowFast checkpoint names its model": {
			script: sh(`#SBATCH --gres=gpu:v100:2`, `python3 train.py --pretrained_model ./TimeSformer_divST_8x32_224_K400.pyth --epochs 5`),
			want:   Features{Launcher: "python", Program: "train.py", Model: "timesformer", ModelFrom: "flag", Epochs: 5, GPUs: 2, GPUType: "v100"},
		},
		"a template's model name is a hole": {
			script: sh(`#SBATCH --gpus=1`, `MODEL="modelname"`, `srun python -u train.py --model $MODEL --epochs 10`),
			want:   Features{Launcher: "srun", Program: "train.py", Epochs: 10, GPUs: 1},
		},
		"a policy reached over a websocket is no policy's name": {
			script: sh(`#SBATCH --gpus=1`, `python eval.py policy=websocket task.name=turning_on_radio`),
			want:   Features{Launcher: "python", Program: "eval.py", GPUs: 1},
		},
		"a job named for setting up and a program named for its data leave the environment's name": {
			script: sh(`#SBATCH --gpus=1`, `#SBATCH --job-name=InstallEnvironment`, `source activate videollava`,
				`python inference_dataset.py --task_type multi-choice`),
			want: Features{Launcher: "python", Program: "inference_dataset.py", Model: "videollava", ModelFrom: "path", GPUs: 1,
				JobName: "InstallEnvironment"},
		},
		"a program named for a paper's settings names no work": {
			script: sh(`#SBATCH --gpus=1`, `#SBATCH --job-name=train`, `python -u train_paper.py --epochs 20 --tag paper_settings`),
			want:   Features{Launcher: "python", Program: "train_paper.py", Epochs: 20, GPUs: 1, JobName: "train"},
		},
		"a server beside the job's model is not another run": {
			script: sh(`#SBATCH --gres=gpu:4`, `python -m sglang.launch_server --model-path /models/crrrocq_base --tp-size 2 &`,
				`python -m sglang.launch_server --model-path /hub/Qwen3-Embedding-4B --tp-size 2 --is-embedding &`, `wait`),
			want: Features{Launcher: "python", Program: "-m sglang.launch_server", Model: "crrrocq_base", ModelFrom: "flag", GPUs: 4},
		},
		"a model's name run into its mode": {
			script: sh(`#SBATCH --gres=gpu:1`, `python test.py --dataroot data/clevr --name clevr_s_400 --model 'uorf_eval' --num_slots 8`),
			want:   Features{Launcher: "python", Program: "test.py", Model: "uorf", ModelFrom: "flag", GPUs: 1},
		},
		"a training batch named with its word last": {
			script: sh(`#SBATCH --gpus-per-task=a100:1`, `python ./bimodal_exps/clip.py --use_amp --batch_size_train 256 --epochs 1`),
			want: Features{Launcher: "python", Program: "clip.py", Model: "clip", ModelFrom: "path", BatchSize: 256, GPUs: 1,
				GPUType: "a100", Precision: "amp", Epochs: 1},
		},
		"an evaluation program's inference batch is its batch": {
			script: sh(`python3 eval.py --resume logs/run1/best_model.pth --infer_batch_size 16 --backbone resnet18`),
			want:   Features{Launcher: "python", Program: "eval.py", Model: "resnet18", ModelFrom: "flag", BatchSize: 16},
		},
		"a training program's evaluation batch is not its own": {
			script: sh(`python -u train.py loss=dpo model=qwen n_epochs=8 eval_batch_size=2`),
			want:   Features{Launcher: "python", Program: "train.py", Model: "qwen", ModelFrom: "flag", Epochs: 8},
		},
		"a model flag no list names, built of a model word and how it is given": {
			script: sh(`python main.py --base 50 --pretrained_model_name dino-vitb16 --data_dir datasets/cifar100`),
			want:   Features{Launcher: "python", Program: "main.py", Model: "dino-vitb16", ModelFrom: "flag"},
		},
		"--architecture names the model": {
			script: sh(`ARCH=convnext_tiny`, `python main.py --architecture "$ARCH" --data_dir data/cifar100`),
			want:   Features{Launcher: "python", Program: "main.py", Model: "convnext_tiny", ModelFrom: "flag"},
		},
		"a model word beside where the model is written or kept is no model flag": {
			script: sh(`python main.py --output_model_name my-finetune --model_save_path runs/x --teacher_model_name resnet152`),
			want:   Features{Launcher: "python", Program: "main.py"},
		},
		"verl's deprecated ppo_micro_batch_size is split over its GPUs; the critic's is not the policy's": {
			script: sh(`#SBATCH --gres=gpu:8`, `python3 -m verl.trainer.main_ppo data.train_batch_size=512 \`,
				`  actor_rollout_ref.model.path=Qwen/Qwen2.5-3B actor_rollout_ref.actor.ppo_micro_batch_size=64 \`,
				`  actor_rollout_ref.actor.ulysses_sequence_parallel_size=2 critic.ppo_micro_batch_size=8 \`,
				`  trainer.n_gpus_per_node=8 trainer.nnodes=2`),
			want: Features{Launcher: "python", Program: "-m verl.trainer.main_ppo", Model: "qwen/qwen2.5-3b", ModelFrom: "flag",
				BatchSize: 8, GPUs: 8},
		},
		"verl's micro-batch over GPUs it cannot count is unknown, not the prompts of a step": {
			script: sh(`#SBATCH --gres=gpu:8`, `python3 -m verl.trainer.main_ppo data.train_batch_size=512 \`,
				`  actor_rollout_ref.model.path=Qwen/Qwen2.5-3B actor_rollout_ref.actor.ppo_micro_batch_size=64 \`,
				`  trainer.n_gpus_per_node=8 trainer.nnodes=$NODES`),
			want: Features{Launcher: "python", Program: "-m verl.trainer.main_ppo", Model: "qwen/qwen2.5-3b", ModelFrom: "flag",
				GPUs: 8, Unknown: []string{"batch_size"}},
		},
		"verl's trainer counts the GPUs a header without a GPU request leaves to it": {
			script: sh(`#SBATCH --nodes=1`, `#SBATCH --environment=verl`, `python3 -m verl.trainer.main_ppo actor_rollout_ref.model.path=Qwen/Qwen2.5-3B \`,
				`  actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4 trainer.n_gpus_per_node=4 trainer.nnodes=2`),
			want: Features{Launcher: "python", Program: "-m verl.trainer.main_ppo", Model: "qwen/qwen2.5-3b", ModelFrom: "flag",
				BatchSize: 4, GPUs: 8},
		},
		"verl's driver started by srun on the Ray head is one task; its trainer counts the GPUs": {
			script: sh(`#SBATCH --nodes=1`, `#SBATCH --ntasks-per-node=1`, `N_GPU=4`,
				`srun --overlap --nodes=1 --ntasks=1 -w "$head_node" python3 -m verl.trainer.main_ppo \`,
				`  actor_rollout_ref.model.path=Qwen/Qwen3-1.7B actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4 \`,
				`  trainer.n_gpus_per_node=$N_GPU trainer.nnodes=1`),
			want: Features{Launcher: "srun", Program: "-m verl.trainer.main_ppo", Model: "qwen/qwen3-1.7b", ModelFrom: "flag",
				BatchSize: 4, GPUs: 4},
		},
		"verl's per-GPU micro-batch is the policy's, whatever the critic's": {
			script: sh(`#SBATCH --gres=gpu:4`, `python3 -m verl.trainer.main_ppo actor_rollout_ref.model.path=Qwen/Qwen2.5-3B \`,
				`  actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4 critic.ppo_micro_batch_size_per_gpu=16 trainer.n_gpus_per_node=4`),
			want: Features{Launcher: "python", Program: "-m verl.trainer.main_ppo", Model: "qwen/qwen2.5-3b", ModelFrom: "flag",
				BatchSize: 4, GPUs: 4},
		},
		"verl's policy kept in a directory is the model its name gives; the critic's is beside it": {
			script: sh(`#SBATCH --gres=gpu:4`, `MODEL_PATH=/share/lab/LLMs/Qwen2.5-7B-Instruct`,
				`python3 -m verl.trainer.main_ppo critic.model.path=/share/lab/LLMs/Qwen2.5-32B \`,
				`  actor_rollout_ref.model.path=${MODEL_PATH} trainer.sampling_strategy=treerl trainer.n_gpus_per_node=4`),
			want: Features{Launcher: "python", Program: "-m verl.trainer.main_ppo", Model: "qwen2.5-7b-instruct", ModelFrom: "flag",
				GPUs: 4},
		},
		"a model exported under a name of the program's own is the model; one pushed or beside it is not": {
			script: sh(`#SBATCH --gpus=1`, `export HUB_MODEL_ID=pokemon-lora REWARD_MODEL=OpenAssistant/reward-model-deberta-v3-large`,
				`export FINETUNE_MODEL="${FINETUNE_MODEL:-Qwen/Qwen3.5-9B}"`, `python src/fine_tuning/train.py --mode sft`),
			want: Features{Launcher: "python", Program: "train.py", Model: "qwen/qwen3.5-9b", ModelFrom: "env", GPUs: 1},
		},
		"exported models that disagree name none": {
			script: sh(`#SBATCH --gpus=1`, `export SFT_MODEL_PATH=/models/Llama-3.1-8B DPO_MODEL_PATH=/models/Qwen2.5-7B`,
				`python src/fine_tuning/train.py --mode sft`),
			want: Features{Launcher: "python", Program: "train.py", GPUs: 1},
		},
		"the environment a job activates stands in where nothing names its work": {
			script: sh(`#SBATCH --gres=gpu:1`, `module load miniconda`, `conda activate cryodrgn_rotations`, `python train.py "$1"`),
			want:   Features{Launcher: "python", Program: "train.py", Model: "cryodrgn", ModelFrom: "path", GPUs: 1},
		},
		"an environment named for a model family says more than a job's project name": {
			script: sh(`#SBATCH --gres=gpu:1`, `#SBATCH --job-name=hcc`, `source activate dinov2`, `python run.py --data /data/hcc`),
			want: Features{Launcher: "python", Program: "run.py", Model: "dinov2", ModelFrom: "path", GPUs: 1,
				JobName: "hcc"},
		},
		"an environment the job's name agrees with says more than the directory it runs in": {
			script: sh(`#SBATCH --gres=gpu:1`, `#SBATCH --job-name=pacformer`, `cd /scratch/u1/PACLock`, `conda activate pacformer`,
				`python train.py --config configs/$1.yaml`),
			want: Features{Launcher: "python", Program: "train.py", Model: "pacformer", ModelFrom: "path", GPUs: 1,
				JobName: "pacformer"},
		},
		"an environment the launch's arguments agree with says more than a job's project name": {
			script: sh(`#SBATCH --gres=gpu:1`, `#SBATCH --job-name=hex`, `conda activate atlasnet`,
				`python train.py --shapenet13 --dir_name training/trained_models/atlasnet_autoencoder_25_squares --nb_primitives 25`),
			want: Features{Launcher: "python", Program: "train.py", Model: "atlasnet", ModelFrom: "path", GPUs: 1, JobName: "hex"},
		},
		"an environment the program's name agrees with says more than a job's project name": {
			script: sh(`#SBATCH --gres=gpu:1`, `#SBATCH --job-name=ssci`, `conda activate cnn`, `python train_cnn.py`),
			want:   Features{Launcher: "python", Program: "train_cnn.py", Model: "cnn", ModelFrom: "path", GPUs: 1, JobName: "ssci"},
		},
		"a program named for a kind of network says more than a job's project name": {
			script: sh(`#SBATCH --gres=gpu:1`, `#SBATCH --job-name=ddptrain`, `conda activate cell-vae`, `torchrun --nproc_per_node=1 train_vae.py`),
			want:   Features{Launcher: "torchrun", Program: "train_vae.py", Model: "vae", ModelFrom: "path", GPUs: 1, JobName: "ddptrain"},
		},
		"a recurrent network's kind in a program's name": {
			script: sh(`#SBATCH --gpus=1`, `#SBATCH --job-name=audio-classification`, `python run_experiment_gru_lightning.py --epochs 200 --batch_size 100`),
			want: Features{Launcher: "python", Program: "run_experiment_gru_lightning.py", Model: "gru", ModelFrom: "path", BatchSize: 100,
				Epochs: 200, GPUs: 1, JobName: "audio-classification"},
		},
		"a kind of network named alone as the program's argument": {
			script: sh(`#SBATCH --gres=gpu:a100:2`, `python3 train_test.py cnn --GPU --tune both`),
			want:   Features{Launcher: "python", Program: "train_test.py", Model: "cnn", ModelFrom: "flag", GPUs: 2, GPUType: "a100"},
		},
		"a size and a sample rate under --model name no model": {
			script: sh(`#SBATCH --gres=gpu:1`, `python demo.py --model small_16k --duration 8`),
			want:   Features{Launcher: "python", Program: "demo.py", GPUs: 1},
		},
		"a training method under --model is no model": {
			script: sh(`#SBATCH --gpus=1`, `python main.py --model curriculum --mode train`),
			want:   Features{Launcher: "python", Program: "main.py", GPUs: 1},
		},
		"a program named for a kind of network says more than a project name the job and its environment share": {
			script: sh(`#SBATCH --gpus=1`, `#SBATCH --job-name=IIT_glucose`, `cd $HOME/IIT_glucose/`, `source activate iit_glucose`,
				`srun python3 -u main_MLP.py`),
			want: Features{Launcher: "srun", Program: "main_MLP.py", Model: "mlp", ModelFrom: "path", GPUs: 1, JobName: "IIT_glucose"},
		},
		"a directory the job runs in named for a versioned model says more than a job's project name": {
			script: sh(`#SBATCH --gres=gpu:1`, `#SBATCH --job-name=hourglass_prior_freq_50`, `cd rizzai/RizzAI`, `cd blip2`, `python test.py`),
			want: Features{Launcher: "python", Program: "test.py", Model: "blip2", ModelFrom: "path", GPUs: 1,
				JobName: "hourglass_prior_freq_50"},
		},
		"a config's name says more of the work than the directory the program is in": {
			script: sh(`#SBATCH --gres=gpu:1`, `CONFIG="02_train_configs/lstm/lstm_combined.yml"`,
				`python neuralhydrology_py/train.py "${CONFIG}" --mode all --epochs 1`),
			want: Features{Launcher: "python", Program: "train.py", Model: "lstm", ModelFrom: "path", Epochs: 1, GPUs: 1},
		},
		"the prose's name for the work stands in over the environment's": {
			script: sh(`#SBATCH --gres=gpu:1`, `#SBATCH --job-name=ipavoice-vits`, `# VITS training on Tesla P100-PCIE-16GB.`,
				`source activate ipavoice`, `python train.py -c configs/ipa.json`),
			want: Features{Launcher: "python", Program: "train.py", Model: "vits", ModelFrom: "path", GPUs: 1,
				JobName: "ipavoice-vits"},
		},
		"the job's name says more of the work than the clone it runs in": {
			script: sh(`#SBATCH --gres=gpu:1`, `#SBATCH --job-name=unet-baseline`, `cd ${HOME}/workspace/cil-visionavengers-depth`,
				`python train.py --batch_size 8`),
			want: Features{Launcher: "python", Program: "train.py", Model: "unet", ModelFrom: "path", BatchSize: 8, GPUs: 1,
				JobName: "unet-baseline"},
		},
		"a directory inside the project the environment and job name say is the work's": {
			script: sh(`#SBATCH --gres=gpu:1`, `#SBATCH --job-name=daft-exprt`, `conda activate daft_exprt`,
				`cd /work/u1/daft-exprt/hifi_gan`, `python train.py --config config_v1.json`),
			want: Features{Launcher: "python", Program: "train.py", Model: "hifi_gan", ModelFrom: "path", GPUs: 1,
				JobName: "daft-exprt"},
		},
		"a variant named for the family an environment names stays; installers and trainers of many families name none": {
			script: sh(`#SBATCH --gres=gpu:1`, `#SBATCH --job-name=meg-mamba`, `source ~/miniconda3/bin/activate`, `conda activate mamba3`,
				`python train.py`),
			want: Features{Launcher: "python", Program: "train.py", Model: "meg-mamba", ModelFrom: "path", GPUs: 1,
				JobName: "meg-mamba"},
		},
		"conda's activate script given an environment activates that one, not its installer's directory": {
			script: sh(`#SBATCH --gres=gpu:1`, `#SBATCH --job-name=vid`, `source /opt/mamba/bin/activate torch-2.10.0`, `python main.py`),
			want:   Features{Launcher: "python", Program: "main.py", Model: "vid", ModelFrom: "path", GPUs: 1, JobName: "vid"},
		},
		"the output file's name, read as the job's is, after it": {
			script: sh(`#SBATCH --gres=gpu:1`, `#SBATCH --job-name=pendulum-llama`, `#SBATCH --output=logs/llama2-pendulum.out`,
				`python src/run_sft.py recipes/config_lora_llama.yaml`),
			want: Features{Launcher: "python", Program: "run_sft.py", Model: "llama2", ModelFrom: "job_name", GPUs: 1, JobName: "pendulum-llama"},
		},
		"an output file's version dots and Slurm's patterns": {
			script: sh(`#SBATCH --gres=gpu:1`, `#SBATCH -o slurm/llama-3.1-8b-%A_%a.out`, `python sft.py`),
			want:   Features{Launcher: "python", Program: "sft.py", Model: "llama-3.1-8b", ModelFrom: "job_name", GPUs: 1},
		},
		"an output file named for the job (%x) says nothing more": {
			script: sh(`#SBATCH --gres=gpu:1`, `#SBATCH --job-name=pendulum-llama`, `#SBATCH --output=logs/%x-llama2-%j.out`,
				`python src/run_sft.py recipes/config_lora_llama.yaml`),
			want: Features{Launcher: "python", Program: "run_sft.py", Model: "llama", ModelFrom: "config", GPUs: 1, JobName: "pendulum-llama"},
		},
		"a job name's YOLO scale sizes the program's YOLO": {
			script: sh(`#SBATCH --gres=gpu:1`, `#SBATCH --job-name=f-Yolo11x-+50k`, `srun ./yolo11_resume.sh`),
			want:   Features{Launcher: "srun", Program: "yolo11_resume.sh", Model: "yolo11x", ModelFrom: "job_name", GPUs: 1, JobName: "f-Yolo11x-+50k"},
		},
		"a registry's model name for a data set is the model's": {
			script: sh(`#SBATCH --gres=gpu:1`, `python train_cifar.py --model cifar100_usvgg13_bn --dataset cifar100`),
			want:   Features{Launcher: "python", Program: "train_cifar.py", Model: "usvgg13_bn", ModelFrom: "flag", GPUs: 1},
		},
		"an RL agent's algorithm stands in, not its environment": {
			script: sh(`#SBATCH --gres=gpu:1`, `python cleanrl/ppo_atari_envpool.py --env-id Breakout-v5`),
			want:   Features{Launcher: "python", Program: "ppo_atari_envpool.py", Model: "ppo", ModelFrom: "path", GPUs: 1},
		},
		"an RL library's name is no work's": {
			script: sh(`#SBATCH --gres=gpu:1`, `#SBATCH --job-name=atari_cleanrl_gpu`, `python src/ppo_atari.py --track`),
			want:   Features{Launcher: "python", Program: "ppo_atari.py", Model: "ppo", ModelFrom: "path", GPUs: 1, JobName: "atari_cleanrl_gpu"},
		},
		"an RL job's name says its algorithm": {
			script: sh(`#SBATCH --gres=gpu:1`, `#SBATCH --job-name=PPO-Breakout`, `python main.py`),
			want:   Features{Launcher: "python", Program: "main.py", Model: "ppo", ModelFrom: "path", GPUs: 1, JobName: "PPO-Breakout"},
		},
		"an LLM's PPO names the LLM": {
			script: sh(`#SBATCH --gres=gpu:1`, `python llama_ppo.py`),
			want:   Features{Launcher: "python", Program: "llama_ppo.py", Model: "llama", ModelFrom: "path", GPUs: 1},
		},
		"a hidden shell script named for a family it trains": {
			script: sh(`#SBATCH --gres=gpu:1`, `bash scripts/pretrain_bert.sh`),
			want:   Features{Program: "pretrain_bert.sh", Model: "bert", ModelFrom: "path", GPUs: 1},
		},
		"a hidden shell script named for no model is not the launch": {
			script: sh(`#SBATCH --gres=gpu:1`, `bash run.sh`),
			want:   Features{GPUs: 1},
		},
		"LLaMA-Factory's environment names no llama": {
			script: sh(`#SBATCH --gres=gpu:1`, `#SBATCH --job-name=crox`, `source ~/envs/llama_factory/bin/activate`, `llamafactory-cli train x.yaml`),
			want: Features{Launcher: "python", Program: "llamafactory-cli train", Model: "crox", ModelFrom: "path", GPUs: 1,
				JobName: "crox"},
		},
		"a configargparse text config names the work; a list of files does not": {
			script: sh(`#SBATCH --gres=gpu:1`, `python3 train.py --config configs/gnt_plain.txt --train_scenes chair`,
				`python3 render.py data/lists/test.txt`),
			want: Features{Launcher: "python", Program: "train.py", Model: "gnt", ModelFrom: "path", GPUs: 1},
		},
		"an OpenMMLab config given to its tools/train.py names the algorithm; a file named for none does not": {
			script: sh(`#SBATCH --gres=gpu:2`, `srun python tools/train.py configs/autoassign/autoassign_r50-caffe_fpn_1x_coco.py --launcher slurm`,
				`srun python tools/test.py configs/posec3d/slowonly_r50_xsub/joint.py`),
			want: Features{Launcher: "srun", Program: "train.py", Model: "autoassign", ModelFrom: "path", GPUs: 2},
		},
		"an interpreter named by a variable the script does not show runs the module after it": {
			script: sh(`#SBATCH --gres=gpu:1`, `source scripts/env.sh`, `"$CONDUCTOR_PYTHON" -m conductor.train --config configs/training/olmoe_sft.yaml`,
				`${PY_BIN} -u tools/score.py --model_name_or_path gpt2`, `$COPY_TOOL logs/ out/`),
			want: Features{Launcher: "python", Program: "-m conductor.train", Model: "olmoe", ModelFrom: "config", GPUs: 1},
		},
		"a DeepSpeed config named for its precision": {
			script: sh(`python main.py --distributed --num-gpus 8 --mode train --config-yml configs/s2ef/gemnet-dT.yml --deepspeed-config configs/ds_config_fp16.json`),
			want: Features{Launcher: "python", Program: "main.py", Model: "gemnet", ModelFrom: "config", Precision: "fp16",
				GPUs: 8},
		},
		"accelerate's --num_processes counts the processes of all machines": {
			script: sh(`#SBATCH --nodes=2`, `#SBATCH --exclusive`, `GPUS_PER_NODE=8`, `NNODES=2`,
				`srun bash -c "accelerate launch --multi_gpu --num_machines $NNODES --num_processes $((GPUS_PER_NODE*NNODES)) --machine_rank \$SLURM_PROCID -m axolotl.cli.train llama3-70b-fft.yaml"`),
			want: Features{Launcher: "accelerate", Program: "axolotl.cli.train", Model: "llama3-70b", ModelFrom: "config", GPUs: 16},
		},
		"torchrun's --nproc_per_node counts per node": {
			script: sh(`torchrun --nnodes 2 --nproc_per_node 4 train.py --model resnet50`),
			want:   Features{Launcher: "torchrun", Program: "train.py", Model: "resnet50", ModelFrom: "flag", GPUs: 8},
		},
		"--gpus counts the job's GPUs whatever --gpus-per-node says; --tasks-per-node is --ntasks-per-node": {
			script: sh(`#SBATCH --gpus=4`, `#SBATCH --gpus-per-node=2`, `#SBATCH --ntasks=4`, `#SBATCH --tasks-per-node=2`,
				`#SBATCH --constrain=a100`, `srun python ddp.py --epochs=10 --batch-size=256`),
			want: Features{Launcher: "srun", Program: "ddp.py", BatchSize: 256, Epochs: 10, GPUs: 4, GPUType: "a100"},
		},
		"OpenMMLab's dist_train.sh is given a config, not a program to run": {
			script: sh(`#SBATCH --gres=gpu:8`, `bash tools/dist_train.sh configs/mask_rcnn/mask-rcnn_r50_fpn_1x_coco.py 8`),
			want:   Features{Program: "dist_train.sh", Model: "mask-rcnn-r50-fpn", ModelFrom: "config", GPUs: 8},
		},
		"a config given alone, named for its precision": {
			script: sh(`#SBATCH --nodes=2`, `srun scripts/accelerate_train_example.sh configs/accelerate/zero2-bf16.yaml /opt/conda trlx`),
			want:   Features{Launcher: "srun", Program: "accelerate_train_example.sh", Precision: "bf16"},
		},
		"a comment about another family's run is not this job's": {
			script: sh(`python src/train.py --config configs/bart_training.yaml`, `# For T5-base instead:`, `# python src/train.py --config configs/t5_training.yaml`),
			want:   Features{Launcher: "python", Program: "train.py", Model: "bart", ModelFrom: "config"},
		},
		"--model_tag names a hub model": {
			script: sh(`python -m utils.train_classifier --batch_size 64 --model_tag "distilbert-base-multilingual-cased"`),
			want:   Features{Launcher: "python", Program: "-m utils.train_classifier", Model: "distilbert-base-multilingual-cased", ModelFrom: "flag", BatchSize: 64},
		},
		"model=both names a choice, not a model": {
			script: sh(`python modeling.py model=both model.gpu=-1`),
			want:   Features{Launcher: "python", Program: "modeling.py", Model: "modeling", ModelFrom: "path"}, // the program standing in
		},
		"PySlowFast's TRAIN.BATCH_SIZE counts all GPUs' clips, NUM_GPUS per machine": {
			script: sh(`python tools/run_net.py --cfg configs/Kinetics/SLOW_8x8_R50.yaml NUM_GPUS 4 NUM_SHARDS 2 TRAIN.BATCH_SIZE 64 SOLVER.BASE_LR 0.1`),
			want:   Features{Launcher: "python", Program: "run_net.py", BatchSize: 8, GPUs: 8},
		},
		"PySlowFast's TRAIN.BATCH_SIZE with NUM_GPUS in the config counts the job's GPUs' clips": {
			script: sh(`#SBATCH --gres=gpu:2`, `python tools/run_net.py --cfg configs/Kinetics/SLOW_8x8_R50.yaml TRAIN.BATCH_SIZE 16`),
			want:   Features{Launcher: "python", Program: "run_net.py", BatchSize: 8, GlobalBatchSize: 16, GPUs: 2},
		},
		"yacs overrides given after --opts": {
			script: sh(`#SBATCH --gres=gpu:1`, `python tools/run_net_final.py --cfg configs/Kinetics/SLOW_8x8_R50.yaml \`,
				`  --opts TRAIN.BATCH_SIZE 2 TEST.BATCH_SIZE 2 SOLVER.MAX_EPOCH 50 OUTPUT_DIR ./gaze`),
			want: Features{Launcher: "python", Program: "run_net_final.py", BatchSize: 2, GlobalBatchSize: 2, GPUs: 1},
		},
		"a shell script handed a whole command runs it": {
			script: sh(`#SBATCH --nodes=4`, `#SBATCH --gpus-per-node=6`,
				`srun bash ~/timm/tools/distributed_train.sh "python lightning_train.py /data/imagenet1k --model et_base_patch16_224 --batch-size 32 --devices 6"`),
			want: Features{Launcher: "srun", Program: "lightning_train.py", Model: "et_base_patch16_224", ModelFrom: "flag", BatchSize: 32, GPUs: 24},
		},
		"a Lightning checkpoint's file name is its model's, before the training state": {
			script: sh(`python test.py --model_path ckpt/e2eparking-epoch=20-val_loss=1.25.ckpt --batch_size 8`),
			want:   Features{Launcher: "python", Program: "test.py", Model: "e2eparking", ModelFrom: "flag", BatchSize: 8},
		},
		"a checkpoint file's name before its epoch, written with its own separator": {
			script: sh(`python inference.py --model_path checkpoints/skateMAE_epoch_111_valloss_3835.551323784722_WITHLEGS.pt`),
			want:   Features{Launcher: "python", Program: "inference.py", Model: "skatemae", ModelFrom: "flag"},
		},
		"a checkpoint file named for its epoch names no model; the program stands in": {
			script: sh(`python unet.py --batch_size 16 --model_name run1/model5_epoch71.pk1`),
			want:   Features{Launcher: "python", Program: "unet.py", Model: "unet", ModelFrom: "path", BatchSize: 16},
		},
		"a package named ml holds code; the job names the work": {
			script: sh(`#SBATCH --job-name=mammo_unet_train`, `python src/ml/train.py --epochs 40`),
			want:   Features{Launcher: "python", Program: "train.py", Model: "unet", ModelFrom: "path", Epochs: 40, JobName: "mammo_unet_train"},
		},
		"averaged weights a run saved name no model": {
			script: sh(`python scripts/image_sample.py --model_path /scratch/me/runs/mri/ema_0.9999_009000.pt --batch_size 4`),
			want:   Features{Launcher: "python", Program: "image_sample.py", BatchSize: 4},
		},
		"a hub id is its owner's name for the model, an epoch in it too": {
			script: sh(`SFT="kaist-ai/mpa-Mistral-7b-v0.2-hf-sft-epoch1"`, `deepspeed --module openrlhf.cli.train_ppo --pretrain $SFT --micro_train_batch_size 2`),
			want: Features{Launcher: "deepspeed", Program: "openrlhf.cli.train_ppo", Model: "kaist-ai/mpa-mistral-7b-v0.2-hf-sft-epoch1",
				ModelFrom: "flag", BatchSize: 2},
		},
		"a weights directory is no hub organisation": {
			script: sh(`python train.py --pretrained weights/avak_b16.pt --batch-size 4`),
			want:   Features{Launcher: "python", Program: "train.py", Model: "avak_b16", ModelFrom: "flag", BatchSize: 4},
		},
		"a GPU count taken at run time is the node's, and decides the if": {
			script: sh(`#SBATCH --gres=gpu:a100:1`, `NUM_GPUS=$(python -c 'import torch; print(torch.cuda.device_count())')`,
				`if [ "$NUM_GPUS" -gt 1 ]; then`, `  python train.py --batch_size 16 --amp`, `else`, `  python train.py --batch_size 32 --amp`, `fi`),
			want: Features{Launcher: "python", Program: "train.py", BatchSize: 32, Precision: "amp", GPUs: 1, GPUType: "a100"},
		},
		"nvidia-smi counting the GPUs gives torchrun its processes": {
			script: sh(`#SBATCH --nodes=2`, `#SBATCH --gpus-per-node=4`, `NGPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)`,
				`srun torchrun --nnodes 2 --nproc_per_node $NGPU train.py --global_batch_size $((NGPU * 2 * 16))`),
			want: Features{Launcher: "torchrun", Program: "train.py", BatchSize: 16, GlobalBatchSize: 128, GPUs: 8},
		},
		"a count of GPUs the header does not give stays unknown": {
			script: sh(`#SBATCH --gpus=4`, `NGPU=$(nvidia-smi -L | wc -l)`, `torchrun --nproc_per_node $NGPU train.py`),
			want:   Features{Launcher: "torchrun", Program: "train.py", GPUs: 4},
		},
		"a batch the launch is given over all GPUs, from a per-GPU variable": {
			script: sh(`#SBATCH --gres=gpu:4`, `NUM_GPUS=$(nvidia-smi -L | wc -l)`, `BATCH_SIZE_PER_GPU=128`,
				`BATCH_SIZE=$((BATCH_SIZE_PER_GPU * NUM_GPUS))`, `accelerate launch --num_processes $NUM_GPUS train.py --batch-size=$BATCH_SIZE`),
			want: Features{Launcher: "accelerate", Program: "train.py", BatchSize: 128, GPUs: 4},
		},
		"a batch the script says is split over all GPUs": {
			script: sh(`#SBATCH --nodes=8`, `#SBATCH --gpus-per-node=2`, `# Batch-size will be splitted over all gpus (at least 16/gpu).`,
				`srun python train.py --arch resnest152 --batch-size 256`),
			want: Features{Launcher: "srun", Program: "train.py", Model: "resnest152", ModelFrom: "flag", BatchSize: 16, GPUs: 16},
		},
		"a logged message says the batch is the job's": {
			script: sh(`#SBATCH --gres=gpu:4`, `BATCH_SIZE="${BATCH_SIZE:-2048}"`, `echo "Batch: $BATCH_SIZE (global, divided across GPUs)"`,
				`torchrun --nproc_per_node 4 train.py --batch-size "$BATCH_SIZE"`),
			want: Features{Launcher: "torchrun", Program: "train.py", BatchSize: 512, GPUs: 4},
		},
		"with DDP the batch is per GPU, as the comment says": {
			script: sh(`#SBATCH --gres=gpu:4`, `# with DDP, batch size is per gpu`, `torchrun --nproc_per_node 4 train.py --batch-size 64`),
			want:   Features{Launcher: "torchrun", Program: "train.py", BatchSize: 64, GPUs: 4},
		},
		"a global batch counted in tokens is no count of sequences to divide": {
			script: sh(`#SBATCH --gpus=8`, `SEQ_LEN=32768`, `torchrun --nproc-per-node=8 src/scripts/train/sft.py --dataset.sequence_length=$SEQ_LEN --global_batch_size=$((SEQ_LEN * 32))`),
			want:   Features{Launcher: "torchrun", Program: "sft.py", GlobalBatchSize: 1048576, SeqLen: 32768, GPUs: 8},
		},
		"open_lm's --accum-freq accumulates the global batch": {
			script: sh(`#SBATCH --gres=gpu:2`, `torchrun --nproc-per-node=2 -m open_lm.main --global-batch-size 512 --accum-freq 32 --precision amp_bfloat16`),
			want: Features{Launcher: "torchrun", Program: "open_lm.main", Model: "open_lm", ModelFrom: "path", BatchSize: 8,
				GlobalBatchSize: 512, GradAccum: 32, Precision: "bf16", GPUs: 2},
		},
		"a wrapper no list knows runs the python command it is handed": {
			script: sh(`#SBATCH --gres=gpu:8`,
				`./training.run -w -m $TMP:M/datasets python3 train_net.py --config-file configs/cityscapes/maskformer2_R50_bs16_90k.yaml --num-gpus 8`),
			want: Features{Launcher: "python", Program: "train_net.py", Model: "maskformer2", ModelFrom: "path", BatchSize: 2, GPUs: 8},
		},
		"xvfb-run's options before the program": {
			script: sh(`xvfb-run -a -s "-screen 0 1400x900x24" python train.py --algo ppo --batch-size 64`),
			want:   Features{Launcher: "python", Program: "train.py", Model: "ppo", ModelFrom: "path", BatchSize: 64}, // the algorithm stands in
		},
		"a profiler before a launcher": {
			script: sh(`#SBATCH --gres=gpu:4`, `nsys profile --trace=cuda,nvtx -o rep torchrun --nproc_per_node=4 train.py --batch_size 30`),
			want:   Features{Launcher: "torchrun", Program: "train.py", BatchSize: 30, GPUs: 4},
		},
		"a word naming python is no wrapper when a script comes first": {
			script: sh(`./setup_env.sh python3.10`, `python train.py --model resnet50`),
			want:   Features{Launcher: "python", Program: "train.py", Model: "resnet50", ModelFrom: "flag"},
		},
		"a forward pass's micro-batch is not the training one": {
			script: sh(`python train_reinforce.py ++model.micro_batch_size=1 ++model.reinforce.forward_micro_batch_size=4 ++model.reinforce.rollout_micro_batch_size=4`),
			want:   Features{Launcher: "python", Program: "train_reinforce.py", Model: "reinforce", ModelFrom: "path", BatchSize: 1},
		},
		"a family the flag's name gives, sized by its value": {
			script: sh(`python src/experiments/train.py --dataset=esnli --bart_version=large --num_epochs=10 --batch_size=32`),
			want:   Features{Launcher: "python", Program: "train.py", Model: "bart-large", ModelFrom: "flag", BatchSize: 32, Epochs: 10},
		},
		"a per-GPU batch flag in its own words, beside a plain one": {
			script: sh(`torchrun --nproc_per_node=3 src/train_sft.py --model Qwen/Qwen2.5-1.5B --batch 96 --per-device-batch 4 --per-device-eval-batch 32`),
			want:   Features{Launcher: "torchrun", Program: "train_sft.py", Model: "qwen/qwen2.5-1.5b", ModelFrom: "flag", BatchSize: 4, GPUs: 3},
		},
		"a detectron2 project's config named for its batch of all GPUs": {
			script: sh(`python train_net.py --config-file configs/cityscapes/semantic-segmentation/swin/maskformer2_swin_tiny_bs16_90k.yaml --num-gpus 2`),
			want:   Features{Launcher: "python", Program: "train_net.py", Model: "swin-tiny", ModelFrom: "config", BatchSize: 8, GPUs: 2},
		},
		"a batch variable given to the program as a positional argument": {
			script: sh(`BATCH_SIZE=128`, `EPOCHS=10`, `srun python bert-train.py $SLURM_NNODES $BATCH_SIZE $EPOCHS`),
			want:   Features{Launcher: "srun", Program: "bert-train.py", Model: "bert", ModelFrom: "path", BatchSize: 128},
		},
		"not where another variable holds the same number": {
			script: sh(`BS=2`, `NODES=2`, `python train.py $NODES $BS`),
			want:   Features{Launcher: "python", Program: "train.py"},
		},
		"a config's bs word without --num-gpus says nothing per GPU": {
			script: sh(`python train.py --config configs/unet_bs16.yaml`),
			want:   Features{Launcher: "python", Program: "train.py", Model: "unet", ModelFrom: "config"},
		},
		"a generic program's own directory names the work": {
			script: sh(`cd $HOME/work`, `srun torchrun --nproc_per_node 1 /shared/examples/mingpt/main.py`),
			want:   Features{Launcher: "torchrun", Program: "main.py", Model: "mingpt", ModelFrom: "path", GPUs: 1},
		},
		"a code directory does not; the working directory then does": {
			script: sh(`cd /proj/pytorch-cifar`, `python tools/train.py --lr 0.1`),
			want:   Features{Launcher: "python", Program: "train.py", Model: "cifar", ModelFrom: "path"},
		},
		"LeRobot's policy is the model, in its CLI and its older Hydra group": {
			script: sh(`#SBATCH --gres=gpu:l40s:1`, `python -m lerobot.scripts.train --policy.type=act --dataset.repo_id=lerobot/aloha_sim --batch_size=8`),
			want:   Features{Launcher: "python", Program: "-m lerobot.scripts.train", Model: "act", ModelFrom: "flag", BatchSize: 8, GPUs: 1, GPUType: "l40s"},
		},
		"LeRobot's pretrained policy from the hub": {
			script: sh(`lerobot-train --policy.path=lerobot/smolvla_base --batch_size 64`),
			want:   Features{Launcher: "python", Program: "lerobot-train", Model: "lerobot/smolvla_base", ModelFrom: "flag", BatchSize: 64},
		},
		"LeRobot's Hydra group": {
			script: sh(`POLICY=diffusion`, `python lerobot/scripts/train.py policy=$POLICY env=pusht`),
			want:   Features{Launcher: "python", Program: "train.py", Model: "diffusion", ModelFrom: "flag"},
		},
		"a backbone's name as a section's key (solo-learn's Hydra override)": {
			script: sh(`python3 main_pretrain.py --config-name byol backbone.name=resnet50 optimizer.batch_size=256`),
			want:   Features{Launcher: "python", Program: "main_pretrain.py", Model: "resnet50", ModelFrom: "flag", BatchSize: 256},
		},
		"Megatron's pretrain_gpt.py names no family over a comment that names the model": {
			script: sh(`# MODEL LLama 3.2 1B (1.23B)`, `srun python Megatron-LM/pretrain_gpt.py --micro-batch-size 1 --bf16`),
			want: Features{Launcher: "srun", Program: "pretrain_gpt.py", Model: "llama-3.2-1b", ModelFrom: "comment", BatchSize: 1,
				Precision: "bf16"},
		},
		"a GPU type in the comment of the header's GPU request": {
			script: sh(`#SBATCH --nodes=2`, `#SBATCH --gres=gpu:8                       # 8 GPUs per node (B200)`, `torchrun --nproc_per_node 8 train.py`),
			want:   Features{Launcher: "torchrun", Program: "train.py", GPUs: 16, GPUType: "b200"},
		},
		"a GPU type in the comment of the partition line": {
			script: sh(`#SBATCH --partition=accel-2          # Apolo V100 partition`, `#SBATCH --gres=gpu:2`, `#SBATCH --mem=96G   # 100 GB nodes`,
				`torchrun --nproc_per_node 2 train.py`),
			want: Features{Launcher: "torchrun", Program: "train.py", GPUs: 2, GPUType: "v100", Partition: "accel-2"},
		},
		"a GPU type in the job's name": {
			script: sh(`#SBATCH --job-name=pgolf-8xA100`, `#SBATCH --gres=gpu:4`, `python train.py`),
			want: Features{Launcher: "python", Program: "train.py", Model: "pgolf", ModelFrom: "path", GPUs: 4, GPUType: "a100",
				JobName: "pgolf-8xA100"},
		},
		"not a comment's example, nor a job named for PASCAL VOC": {
			script: sh(`#SBATCH --job-name=pascal`, `#SBATCH --partition=gpu     # e.g. gpu, kempner_h100`, `#SBATCH --gres=gpu:4`, `python train.py`),
			want:   Features{Launcher: "python", Program: "train.py", GPUs: 4, JobName: "pascal", Partition: "gpu"},
		},
		"apex's opt level": {
			script: sh(`srun python train.py --amp_opt_level O1 --local_batch_size 2`),
			want:   Features{Launcher: "srun", Program: "train.py", Precision: "amp", BatchSize: 2},
		},
		"HF's fp16 opt level without --fp16 says nothing": {
			script: sh(`python run_glue.py --model_name_or_path bert-base-uncased --fp16_opt_level O1`),
			want:   Features{Launcher: "python", Program: "run_glue.py", Model: "bert-base-uncased", ModelFrom: "flag"},
		},
		"an RL algorithm under -a is the agent, not an architecture": {
			script: sh(`python train.py -a ppo -e MicroRTS`),
			want:   Features{Launcher: "python", Program: "train.py", Model: "ppo", ModelFrom: "path"},
		},
		"a tensor assigned in inline Python is no model": {
			script: sh(`python -c "import torch; a = torch.ones(4096, 4096, dtype=torch.bfloat16, device='cuda'); print(a.sum())"`),
			want:   Features{Launcher: "python", Program: "-", Precision: "bf16"},
		},
		"nor does a directory named for whose scripts it holds": {
			script: sh(`cd ~/projects/deepmask-pytorch`, `python organized_scripts/finetune_lora_cuda_fixed.py`),
			want:   Features{Launcher: "python", Program: "finetune_lora_cuda_fixed.py", Model: "deepmask", ModelFrom: "path"},
		},
		"the training program is the launch, not the data preparation before it": {
			script: sh(`cd $HOME/nanoGPT`, `python data/shakespeare_char/prepare.py`, `python train.py config/train_shakespeare_char.py`),
			want:   Features{Launcher: "python", Program: "train.py", Model: "nanogpt", ModelFrom: "path"},
		},
		"a program named in generic words names nothing; its directory does": {
			script: sh(`cd ~/scratch/evrt_detr`, `python3 scripts/eval_model_video.py models/gen1/run3 --data-name video`),
			want:   Features{Launcher: "python", Program: "eval_model_video.py", Model: "evrt_detr", ModelFrom: "path"},
		},
		"a module's package is the project": {
			script: sh(`#SBATCH --gres=gpu:4`, `torchrun --standalone --nproc_per_node=4 -m poet_2.training.train --dtype bf16`),
			want: Features{Launcher: "torchrun", Program: "poet_2.training.train", Model: "poet_2", ModelFrom: "path", GPUs: 4,
				Precision: "bf16"},
		},
		"Google's BERT release directories": {
			script: sh(`python run_classifier.py --bert_config_file=./cased_L-24_H-1024_A-16/bert_config.json --train_batch_size=16`),
			want: Features{Launcher: "python", Program: "run_classifier.py", Model: "bert-large-cased", ModelFrom: "config",
				BatchSize: 16},
		},
	}
	runFeatureCases(t, cases)
}

// TestArchitectureNames: architectures whose name alone names the model
// (interatomic potentials, protein folding, weather, speech, generative
// models) are read where a family's bare name is not, and the other ways
// science and audio codebases name their model and GPUs.
func TestArchitectureNames(t *testing.T) {
	cases := featureCases{
		"a subcommand's model word": {
			script: sh(`#SBATCH --gres=gpu:v100:1`, `python spk_run.py train schnet qm9 data/qm9.db runs/ --cuda`),
			want:   Features{Launcher: "python", Program: "spk_run.py", Model: "schnet", ModelFrom: "flag", GPUs: 1, GPUType: "v100"},
		},
		"a config named for the architecture": {
			script: sh(`#SBATCH --gres=gpu:a100:1`, `srun python scripts/train.py --workdir=runs/egap --config=configs/aflow_egap_painn.py`),
			want:   Features{Launcher: "srun", Program: "train.py", Model: "painn", ModelFrom: "config", GPUs: 1, GPUType: "a100"},
		},
		"a preset in camel case": {
			script: sh(`#SBATCH --gpus-per-node=4`, `srun python train_protein.py data/ out/ --yaml_config_preset presets/finetune_esmFold_lowLR.yml --precision 16`),
			want: Features{Launcher: "srun", Program: "train_protein.py", Model: "esmfold", ModelFrom: "config", GPUs: 4,
				Precision: "fp16"},
		},
		"a family's bare name in a subcommand is still no model": {
			script: sh(`#SBATCH --gres=gpu:1`, `python main.py train llama data/`),
			want:   Features{Launcher: "python", Program: "main.py", GPUs: 1},
		},
		"a Hydra group's option names the model": {
			script: sh(`#SBATCH --gres=gpu:2`, `dora run solver=compression/encodec_base_24khz dset=audio/example dataset.batch_size=16`),
			want: Features{Launcher: "python", Program: "dora run", Model: "encodec-base", ModelFrom: "config", GPUs: 2,
				BatchSize: 16},
		},
		"a Hydra path under a directory key is no model": {
			script: sh(`#SBATCH --gres=gpu:1`, `python train.py save_dir=runs/opt_prompts/grpo`),
			want:   Features{Launcher: "python", Program: "train.py", GPUs: 1},
		},
		"a weights file named for its size in a model's directory": {
			script: sh(`#SBATCH --gres=gpu:4`, `python megatron_gpt_finetuning.py model.restore_from_path=/models/llama-3-8b-instruct-nemo_v1.0/8b_instruct_nemo_bf16.nemo`),
			want: Features{Launcher: "python", Program: "megatron_gpt_finetuning.py", Model: "llama-3-8b-instruct", ModelFrom: "flag",
				GPUs: 4},
		},
		"a Lightning program's nodes and devices": {
			script: sh(`#SBATCH --nodes=8`, `#SBATCH --ntasks-per-node=4`, `srun python pretrain.py --accelerator gpu --nodes $SLURM_JOB_NUM_NODES --devices $SLURM_NTASKS_PER_NODE --batch-size 32`),
			want:   Features{Launcher: "srun", Program: "pretrain.py", GPUs: 32, BatchSize: 32},
		},
		"an architecture's project directory": {
			script: sh(`#SBATCH --gres=gpu:k40:1`, `mpirun -np 8 ~/env/bin/python ~/projects/nnUNet/nnunet/run/run_training.py 3d_fullres nnUNetTrainerV2 2 0`),
			want: Features{Launcher: "mpirun", Program: "run_training.py", Model: "nnunet", ModelFrom: "path", GPUs: 1,
				GPUType: "k40"},
		},
		"open_clip's pretrained tag is whose weights": {
			script: sh(`#SBATCH --gres=gpu:1`, `python -m open_clip_train.main --model ViT-B-16 --pretrained "openai" --batch-size 32`),
			want: Features{Launcher: "python", Program: "-m open_clip_train.main", Model: "vit-b-16", ModelFrom: "flag", GPUs: 1,
				BatchSize: 32},
		},
		"open_clip's pretrained tag names a data set": {
			script: sh(`#SBATCH --gres=gpu:1`, `python -m open_clip_train.main --model ViT-B-16 --pretrained laion2b_s34b_b88k`),
			want:   Features{Launcher: "python", Program: "-m open_clip_train.main", Model: "vit-b-16", ModelFrom: "flag", GPUs: 1},
		},
		"a scale alone is no model": {
			script: sh(`#SBATCH --gres=gpu:1`, `python train.py --BACKBONE effnet --MODEL b6`),
			want:   Features{Launcher: "python", Program: "train.py", Model: "effnet", ModelFrom: "flag", GPUs: 1},
		},
		"a two-word TinyLlama": {
			script: sh(`#SBATCH --gres=gpu:8`, `torchrun --nproc_per_node=8 run_train.py --config-file examples/config_tiny_llama.yaml`),
			want:   Features{Launcher: "torchrun", Program: "run_train.py", Model: "tinyllama", ModelFrom: "config", GPUs: 8},
		},
	}
	runFeatureCases(t, cases)
}

// TestModelParamsFromName: the size a model's name states, the point of
// a size below one billion left out in some (qwen3_06b).
func TestModelParamsFromName(t *testing.T) {
	for name, want := range map[string]float64{
		"meta-llama/Llama-2-7b-hf": 7e9, "facebook/opt-350m": 350e6, "qwen3-06b": 0.6e9, "qwen2_05b": 0.5e9,
		"mixtral-8x7b": 56e9, "qwen2.5-1.5b": 1.5e9, "resnet50": 0,
		// by table, as people write them: an organisation, underscores
		"gpt2": 124e6, "gpt2-small": 124e6, "roberta_base": 125e6, "FacebookAI/xlm-roberta-large": 560e6,
		"openai-community/gpt2-medium": 355e6, "timm/vit_base_patch16_224": 86.6e6,
	} {
		if got := ModelParams(name); math.Abs(got-want) > 1 {
			t.Errorf("ModelParams(%q) = %g, want %g", name, got, want)
		}
	}
}

// TestModelLookedUp: a model named where the script looks its files up or
// configures it, not under a model flag.
func TestModelLookedUp(t *testing.T) {
	cases := featureCases{
		"a snapshot found in the hub cache": {
			script: sh(`#SBATCH --gres=gpu:1`, `BASE_MODEL=$(find "$HF_HOME/hub/models--Qwen--Qwen3-4B/snapshots" -mindepth 1 -maxdepth 1 -type d | head -n 1)`,
				`python train_grpo.py --base-model "$BASE_MODEL" --judge-model Qwen/Qwen3-32B`),
			want: Features{Launcher: "python", Program: "train_grpo.py", Model: "qwen/qwen3-4b", ModelFrom: "flag", GPUs: 1},
		},
		"a config file under a flag no list knows": {
			script: sh(`#SBATCH --gres=gpu:8`, `torchrun --nproc_per_node=8 -m trainer.run --train-toml configs/pretrain/qwen3_06b.toml`),
			want:   Features{Launcher: "torchrun", Program: "trainer.run", Model: "qwen3-06b", ModelFrom: "config", GPUs: 8},
		},
		"a run named for its date and its steps is no model": {
			script: sh(`#SBATCH --gres=gpu:1`, `python td_sarsa.py --array_name jun6_10m --seed $SLURM_ARRAY_TASK_ID`),
			want:   Features{Launcher: "python", Program: "td_sarsa.py", Model: "td_sarsa", ModelFrom: "path", GPUs: 1},
		},
		"a Hydra config directory's family and its config's variant": {
			script: sh(`#SBATCH --gres=gpu:8`, `fairseq-hydra-train --config-dir examples/roberta/config/pretraining --config-name base task.data=$DATA`),
			want:   Features{Launcher: "python", Program: "fairseq-hydra-train", Model: "roberta-base", ModelFrom: "config", GPUs: 8},
		},
		"a hub id beside the run's own name for it": {
			script: sh(`#SBATCH --gres=gpu:1`, `python train_reranker.py --model_type bart --model facebook/bart-large --model_name bart_cnndm_2_half`),
			want:   Features{Launcher: "python", Program: "train_reranker.py", Model: "facebook/bart-large", ModelFrom: "flag", GPUs: 1},
		},
		"a hub id under -m": {
			script: sh(`#SBATCH --gres=gpu:1`, `python finetune.py -m google/mt5-small -o models/baseline`),
			want:   Features{Launcher: "python", Program: "finetune.py", Model: "google/mt5-small", ModelFrom: "flag", GPUs: 1},
		},
		"a combination of settings is no model": {
			script: sh(`#SBATCH --gres=gpu:1`, `python seq2seq.py --model_path joint+morph --batch_size 32`),
			want:   Features{Launcher: "python", Program: "seq2seq.py", Model: "seq2seq", ModelFrom: "path", GPUs: 1, BatchSize: 32},
		},
		"a Hydra models group": {
			script: sh(`#SBATCH --gres=gpu:a40:1`, `python models/train_model.py models=Online_Laplace trainer_args.max_epochs=50`),
			want: Features{Launcher: "python", Program: "train_model.py", Model: "online_laplace", ModelFrom: "flag", GPUs: 1,
				GPUType: "a40", Epochs: 50},
		},
		"Megatron's checkpoint to start from": {
			script: sh(`#SBATCH --nodes=8`, `#SBATCH --gres=gpu:8`, `torchrun --nnodes 8 --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 8 --save ./ckpt/llama-65b --load ./ckpt/llama-65b --micro-batch-size 1`),
			want: Features{Launcher: "torchrun", Program: "pretrain_gpt.py", Model: "llama-65b", ModelFrom: "flag", GPUs: 64,
				BatchSize: 1},
		},
		"a tokenizer's files are no config": {
			script: sh(`#SBATCH --gres=gpu:1`, `python pretrain_gpt.py --vocab-file gpt2-vocab.json --merge-file gpt2-merges.txt`),
			want:   Features{Launcher: "python", Program: "pretrain_gpt.py", Model: "gpt", ModelFrom: "path", GPUs: 1},
		},
	}
	runFeatureCases(t, cases)
}

package predictor

import "testing"

// Job names (workloadName), program stems and directories (trimWorkWords)
// in the forms sites use; each with the workload word a person takes from
// it, or "" for none.
func TestWorkloadWords(t *testing.T) {
	for _, tc := range []struct {
		name  string
		read  func(string) string
		cases map[string]string
	}{
		{"workloadName", workloadName, map[string]string{
			"sgd_cartpole_all":           "sgd",
			"train_vqgan":                "vqgan",
			"kat_tiny":                   "kat-tiny",
			"TransUNet_f4_lr2_bs64":      "transunet",
			"hrnet-w32-finetune":         "hrnet",
			"PointNet2":                  "pointnet2",
			"DINO_v2_probe":              "dino-v2",
			"nerfacto-7b":                "nerfacto-7b",
			"train":                      "",
			"finetune_lora_run3":         "",
			"eval_fold2":                 "",
			"test_mar23":                 "", // a date
			"VisionTransformer":          "vit",
			"multinode-ddp-test":         "",
			"a100_bench":                 "",
			"myjob":                      "",
			"my_run_5":                   "",
			"$SLURM_JOB_NAME":            "",
			"cifar_train":                "",
			"horovod_tensorflow_mnist":   "",
			"7b_sft":                     "",
			"x":                          "",
			"step500_resume":             "",
			"pretrain-gpt-350m-nodes4":   "gpt-350m",
			"OpenFold2Train":             "openfold2",
			"RunEager":                   "eager", // the job's verb run into the model's name
			"EvalVideoMAE":               "videomae",
			"finetune_bert_on_squad":     "bert", // what it runs on is the data
			"infer_on_trailers":          "",
			"crystal_gnn":                "crystal-gnn",
			"train_conformer-transducer": "conformer-transducer",
			"Train1":                     "",
			"PreTrainMAE":                "mae",
			"TrainingDinov2-llma":        "dinov2",
			"Test_mixed":                 "",
			"contrastive_mdeq_large":     "mdeq-large",
			"model3_eval":                "",
			"<YOUR_JOB_NAME>":            "",
			"jit_b16_200ep":              "jit-b16",
			"train_l10_base29999":        "",
			"your_job_name":              "",
			"efficient_vit_run2":         "efficient-vit",
			"cs231-proj-yolo":            "yolo",
			"jdoe_vit_b16_ft":            "vit-b16",
			"EEL5840_YOLO":               "yolo",
			"cheetah-baseline-seed2":     "", // an RL environment, no model
			"sac_halfcheetah":            "sac",
			"basestats_efficientnet_aug": "efficientnet",
			"algal-bloom":                "algal-bloom", // bloom is a word as well as an LLM's name
			"wide_resnet50_cifar":        "wide-resnet50",
			"ece5545_pest_yolov8_s":      "yolov8",
			"mbart.en.gut.keywords":      "mbart",
			"qwen2.5-sft":                "qwen2.5",
		}},
		{"trimWorkWords", trimWorkWords, map[string]string{
			"segformer-training":               "segformer",
			"ddp_visiontransformer":            "vit", // a name written out in full
			"swin_transformer_tiny":            "swin_tiny",
			"MambaVision":                      "MambaVision",
			"video_to_3dgs":                    "3dgs",
			"speech_training":                  "",
			"fine_tuning":                      "",
			"gcn_train":                        "gcn",
			"pretrain_bert":                    "bert",
			"finetune_lora_fixed":              "",
			"open_clip_eval":                   "open_clip",
			"deepmask-pytorch":                 "deepmask",
			"pytorch-cifar":                    "cifar",
			"ml-20m":                           "ml-20m",
			"workspace":                        "",
			"02_mnist_dp":                      "mnist_dp",
			"run_7b":                           "",
			"slurm_scripts":                    "",
			"ResNet_CIFAR10_main":              "ResNet", // the data set it learns from is no part of its name
			"recontrast_mvtecloco":             "recontrast",
			"vae_mnist":                        "vae",
			"detectron2-main-master":           "detectron2",
			"trainParticleTransformer":         "ParticleTransformer",
			"ProtSCAPE-Net":                    "ProtSCAPE-Net",
			"run_interaction_network":          "interaction_network",
			"train_network":                    "",
			"train_net":                        "",
			"se3_diffusion":                    "se3_diffusion",
			"t5_train":                         "t5",
			"train_h5":                         "",
			"train_t5":                         "t5",
			"step4_tensor_parallel":            "tensor",
			"gcn_f10":                          "gcn",
			"playground":                       "",
			"your_working_directory":           "",
			"YOUR_CONFIG_HERE":                 "",
			"lofar_train_tridentnet":           "tridentnet",
			"mobileViT_train_params_multi_gpu": "mobileViT", // nothing after the train word names the work
			"run_train_parquet":                "parquet",
			"YourTTS":                          "YourTTS",
			"path_to_repo":                     "",
		}},
	} {
		for in, want := range tc.cases {
			if got := tc.read(in); got != want {
				t.Errorf("%s(%q) = %q, want %q", tc.name, in, got, want)
			}
		}
	}
}

// A job's name standing in for its model keeps runs that differ in its
// counter together, as the job name alone did.
func TestSignatureJobNameStandIn(t *testing.T) {
	script := func(name string) Script {
		return ParseScript("#!/bin/bash\n#SBATCH -J " + name + "\n#SBATCH --gres=gpu:1\npython train.py --lr 0.1\n")
	}
	a, b, c := script("pointnet12"), script("pointnet13"), script("dgcnn_run2")
	if a.Features.Model != "pointnet12" || !a.Features.JobNameOnly() {
		t.Fatalf("model %q from %q, want the job's name standing in", a.Features.Model, a.Features.ModelFrom)
	}
	if a.Signature != b.Signature {
		t.Error("the job name's counter split the signature")
	}
	if a.Signature == c.Signature {
		t.Error("another job's name kept the signature")
	}
}

// TestModelPlace checks that a stand-in keeps the place it was read from
// while its source is only written more fully (the command's line), and
// loses it once the model is named anew.
func TestModelPlace(t *testing.T) {
	var f Features
	f.Model, f.ModelFrom = "cifar10", "path"
	f.noteModelPlace(Place{WorkDir, "/scratch/vision/cifar10"})
	f.atLine(7)
	if got, want := f.From["model"], "line 7: cd /scratch/vision/cifar10"; got != want {
		t.Errorf("source = %q, want %q", got, want)
	}
	if f.ModelPlace.Kind != WorkDir {
		t.Errorf("place after atLine = %+v, want the work directory", f.ModelPlace)
	}
	f.Model, f.ModelFrom = "resnet50", "flag"
	f.note("model", "--arch")
	if f.ModelPlace != (Place{}) {
		t.Errorf("place after a flag names the model = %+v, want none", f.ModelPlace)
	}
	if got := (Place{ProgramDir, "mingpt/main.py"}).String(); got != "program mingpt/main.py" {
		t.Errorf("ProgramDir place written %q", got)
	}
}

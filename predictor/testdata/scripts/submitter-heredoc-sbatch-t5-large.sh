#!/bin/bash
# Submit the fine-tuning job from a login node:  bash submitter-heredoc-sbatch-t5-large.sh
# (this file is not itself a batch job; it hands sbatch the job below)

MODEL=google/t5-v1_1-large
PER_DEVICE_BS=16
RUN_DIR=/scratch/$USER/t5-runs/$(date +%Y%m%d-%H%M)
mkdir -p "$RUN_DIR"

sbatch --parsable --gres=gpu:a100:2 <<EOT
#!/bin/bash
#SBATCH --job-name=t5-ft
#SBATCH --nodes=1
#SBATCH --gres=gpu:1
#SBATCH --cpus-per-task=16
#SBATCH --time=12:00:00
#SBATCH --output=${RUN_DIR}/%x-%j.out

module load cuda/12.1
source ~/venvs/t5/bin/activate
torchrun --nproc_per_node=2 run_summarization.py \
  --model_name_or_path ${MODEL} \
  --per_device_train_batch_size ${PER_DEVICE_BS} \
  --bf16 \
  --output_dir ${RUN_DIR}
EOT

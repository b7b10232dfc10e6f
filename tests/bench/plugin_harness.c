/*
 * plugin_harness: the job_submit plugin's own cost per submission, outside
 * slurmctld. It dlopen()s job_submit_augur.so as slurmctld does (Slurm's
 * allocator and log functions come from libslurm), calls init(), then
 * job_submit() N times, each on a fresh thread as slurmctld 22.05's RPC
 * threads are, and prints the median and mean time of the call.
 *
 * augurd is stood in for by a C responder on a thread of this process
 * (AUG1 frames, an "augur:tok=<token> ..." answer), so what is measured is
 * the plugin: its Go runtime entry, the request it builds, the round trip
 * or the reuse window, and applying the answer.
 *
 *   usage: plugin_harness PLUGIN.so MODE N
 *   MODE: ask   every submission asks the responder (reuse off)
 *         reuse identical submissions within shim.reuse_window (1s)
 *         skip  no augurd: after 3 failures the cool-down skips it
 *
 * Built and run by tests/bench/plugin.sh (make bench-plugin).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dlfcn.h>
#include <pthread.h>
#include <slurm/slurm.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static char sock_path[256];

static int readn(int fd, char *b, size_t n)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = read(fd, b + got, n - got);
		if (r <= 0)
			return -1;
		got += r;
	}
	return 0;
}

static void *serve_conn(void *arg)
{
	int fd = (int)(long)arg;
	char *buf = malloc(1 << 24);
	for (;;) {
		char hdr[8], tok[80] = "", body[512], out[600];
		uint32_t n;
		if (readn(fd, hdr, 8))
			break;
		memcpy(&n, hdr + 4, 4);
		n = ntohl(n);
		if (n >= (1 << 24) || readn(fd, buf, n))
			break;
		buf[n] = 0;
		char *t = strstr(buf, "\"token\":\"");
		if (t) {
			t += 9;
			char *e = strchr(t, '"');
			if (e && e - t < 79) {
				memcpy(tok, t, e - t);
				tok[e - t] = 0;
			}
		}
		int bl = snprintf(body, sizeof body,
				  "{\"v\":1,\"token\":\"%s\",\"action\":\"accept\","
				  "\"annotation\":\"augur:tok=%s pred_gpu_mem=3G(p95:3.3G) pred_time=01:00:00 src=history/history runs=3\"}",
				  tok, tok);
		uint32_t be = htonl(bl);
		memcpy(out, "AUG1", 4);
		memcpy(out + 4, &be, 4);
		memcpy(out + 8, body, bl);
		if (write(fd, out, 8 + bl) != 8 + bl)
			break;
	}
	close(fd);
	free(buf);
	return NULL;
}

static void *responder(void *arg)
{
	int s = (int)(long)arg;
	for (;;) {
		int c = accept(s, NULL, NULL);
		if (c < 0)
			continue;
		pthread_t t;
		pthread_create(&t, NULL, serve_conn, (void *)(long)c);
		pthread_detach(t);
	}
	return NULL;
}

static int (*submit)(job_desc_msg_t *, uint32_t, char **);

static const char *script =
	"#!/bin/bash\n#SBATCH --job-name=augur-bench-vit\n#SBATCH --partition=gpu\n#SBATCH --nodes=1\n"
	"#SBATCH --gres=gpu:1\n#SBATCH --cpus-per-task=1\n#SBATCH --time=04:00:00\n"
	"set -euo pipefail\nmodule load cuda/12.1 nccl/2.18 2>/dev/null || true\n"
	"source /opt/venvs/torch-2.1/bin/activate\nexport OMP_NUM_THREADS=${SLURM_CPUS_PER_TASK:-1}\n"
	"DATA=/datasets/imagenet-1k\nCKPT=/scratch/$USER/vit-b16/$SLURM_JOB_ID\nmkdir -p \"$CKPT\"\n"
	"torchrun --standalone --nproc_per_node=1 train.py \\\n    --model vit_base_patch16_224 --data-path \"$DATA\" \\\n"
	"    --epochs 300 --batch-size 256 --lr 3e-3 --weight-decay 0.3 \\\n    --amp --workers 8 --output-dir \"$CKPT\"\n";

struct call {
	double us;
	int rc;
	int annotated;
};

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void *one(void *arg)
{
	struct call *c = arg;
	job_desc_msg_t d;
	char *err = NULL;
	slurm_init_job_desc_msg(&d);
	d.name = "augur-bench-vit";
	d.partition = "gpu";
	d.user_id = 1000;
	d.group_id = 1000;
	d.min_nodes = 1;
	d.time_limit = 240;
	d.work_dir = "/home/user";
	d.tres_per_node = "gres:gpu:1";
	d.script = (char *)script;
	double t0 = now_us();
	c->rc = submit(&d, 1000, &err);
	c->us = now_us() - t0;
	c->annotated = d.admin_comment && strncmp(d.admin_comment, "augur:tok=", 10) == 0;
	/* The strings the plugin set belong to Slurm's allocator; the
	 * harness leaks them, a few hundred bytes per call. */
	return NULL;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: %s PLUGIN.so ask|reuse|skip N\n", argv[0]);
		return 2;
	}
	const char *mode = argv[2];
	int n = atoi(argv[3]);
	char dir[] = "/tmp/augur-plugin-bench.XXXXXX";
	if (!getenv("AUGUR_CONFIG")) {
		/* The Go runtime in the plugin reads the environment the process
		 * started with (an ELF constructor's envp), not setenv's: re-exec
		 * with the config in it. */
		if (!mkdtemp(dir) || n < 1)
			return 2;
		char cfg[300];
		snprintf(cfg, sizeof cfg, "%s/augur.yaml", dir);
		setenv("AUGUR_CONFIG", cfg, 1);
		execv("/proc/self/exe", argv);
		perror("execv");
		return 1;
	}
	const char *cfg = getenv("AUGUR_CONFIG");
	snprintf(dir, sizeof dir, "%s", cfg);
	*strrchr(dir, '/') = 0;
	if (n < 1)
		return 2;
	snprintf(sock_path, sizeof sock_path, "%s/augurd.sock", dir);
	FILE *f = fopen(cfg, "w");
	fprintf(f, "version: 1\nsocket: {path: \"%s\"}\nshim: {timeout: 50ms, reuse_window: %s}\n", sock_path,
		strcmp(mode, "reuse") == 0 ? "1s" : "0s");
	fclose(f);
	setenv("AUGUR_CONFIG", cfg, 1);

	if (strcmp(mode, "skip") != 0) {
		int s = socket(AF_UNIX, SOCK_STREAM, 0);
		struct sockaddr_un a = {.sun_family = AF_UNIX};
		snprintf(a.sun_path, sizeof a.sun_path, "%s", sock_path);
		if (bind(s, (void *)&a, sizeof a) || listen(s, 64)) {
			perror("responder");
			return 1;
		}
		pthread_t t;
		pthread_create(&t, NULL, responder, (void *)(long)s);
	}

	void *h = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 1;
	}
	int (*init)(void) = dlsym(h, "init");
	submit = dlsym(h, "job_submit");
	if (!init || !submit || init() != 0) {
		fprintf(stderr, "plugin init failed\n");
		return 1;
	}
	/* warm-up, then the measured calls, each on its own thread */
	struct call *calls = calloc(n + 200, sizeof *calls);
	double *us = calloc(n, sizeof *us);
	int annotated = 0, failed = 0;
	for (int i = 0; i < n + 200; i++) {
		pthread_t t;
		pthread_create(&t, NULL, one, &calls[i]);
		pthread_join(t, NULL);
		usleep(200); /* slurmctld's submissions arrive apart */
	}
	double sum = 0;
	for (int i = 0; i < n; i++) {
		us[i] = calls[200 + i].us;
		sum += us[i];
		annotated += calls[200 + i].annotated;
		failed += calls[200 + i].rc != 0;
	}
	qsort(us, n, sizeof *us, cmp);
	printf("{\"mode\":\"%s\",\"n\":%d,\"p50_us\":%.1f,\"mean_us\":%.1f,\"p99_us\":%.1f,\"annotated\":%d,\"failed\":%d}\n",
	       mode, n, us[n / 2], sum / n, us[n * 99 / 100], annotated, failed);
	unlink(sock_path);
	unlink(cfg);
	rmdir(dir);
	return 0;
}

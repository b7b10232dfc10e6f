package predictor

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReadGPUNames(t *testing.T) {
	n := func(typ string, mem int) GPUName { return GPUName{Type: typ, MemGiB: mem} }
	cases := map[string][]GPUName{
		"a100":                   {n("a100", 0)},
		"A100":                   {n("a100", 0)},
		"v100-32g":               {n("v100", 32)},
		"teslaM40":               {n("m40", 0)},
		"dgxh100":                {n("h100", 0)},
		"amd_a100nv_8":           {n("a100", 0)},
		"dgx":                    nil,
		"pro6000":                {n("rtxpro6000", 0)},
		"rtx-pro-6000-blackwell": {n("rtxpro6000", 0)},
		"RTX PRO 6000":           {n("rtxpro6000", 0)},
		"GH (Grace-Hopper)":      {n("gh200", 0)},
		"l40sq":                  {n("l40s", 0)},
		"t4v2":                   {n("t4", 0)},
		"public&1v100":           {n("v100", 0)},
		"8xA100":                 {n("a100", 0)},
		"rtx5060ti":              {n("rtx5060ti", 0)},
		"gpu=3090":               {n("rtx3090", 0)},
		"2080":                   {n("rtx2080", 0)},
		"TeslaV100-SXM2-32GB":    {n("v100", 32)},
		"quadroRTX8000":          {n("rtx8000", 0)},
		"GPU_MODEL:rtx_5000":     {n("rtx5000", 0)}, // a constraint naming its feature's kind
		"6000ada":                {n("rtx6000ada", 0)},
		"5000_ada":               {n("rtx5000ada", 0)},
		"256C8G1H_MI325X":        {n("mi325x", 0)}, // a partition named for its nodes
		"teslaroom":              nil,
		"debuga100":              {n("a100", 0)}, // a queue's word run into the type
		"shorth100":              {n("h100", 0)},
		"a100x4q":                {n("a100", 0)}, // a queue of nodes of four
		"testing":                nil,
		"NVIDIAA10080GBPCIe":     {n("a100", 80)},
		"h10094gbnvl":            {n("h100", 94)},
		"a10080":                 nil, // no unit: an a100 of 80 or a count
		"v100_32gb":              {n("v100", 32)},
		"V100-32GB":              {n("v100", 32)},
		"v100-32":                {n("v100", 32)},
		"volta":                  {n("v100", 0)},
		"pascal":                 {n("p100", 0)},
		"volta32gb":              {n("v100", 32)},
		"v100s":                  {n("v100", 32)},
		"a100l":                  {n("a100", 80)},
		"v100l":                  {n("v100", 32)},
		"a100-80g":               {n("a100", 80)},
		"a100_80gb":              {n("a100", 80)},
		"a100-sxm4-80gb":         {n("a100", 80)},
		"ampere80":               {n("a100", 80)},
		"ampere":                 {n("a100", 0)},
		"h100":                   {n("h100", 0)},
		"hopper":                 {n("h100", 0)},
		"lovelace":               {n("l40s", 0)},
		"gpu_blackwell":          {n("b200", 0)},
		"h100nvl":                {n("h100", 0)},
		"a40":                    {n("a40", 0)},
		"a6000":                  {n("a6000", 0)},
		"rtx_a6000":              {n("a6000", 0)},
		"l40s":                   {n("l40s", 0)},
		"t4":                     {n("t4", 0)},
		"p100":                   {n("p100", 0)},
		"a10":                    {n("a10", 0)},
		"a10g":                   {n("a10", 24)},
		"rtx8000":                {n("rtx8000", 0)},
		"quadro_rtx_8000":        {n("rtx8000", 0)},
		"geforce-rtx-2080-ti":    {n("rtx2080ti", 0)},
		"mi250x":                 {n("mi250x", 0)},
		"gpu80":                  {n("", 80)},
		"gpu_32gb":               {n("", 32)},
		"gpu-80":                 {n("", 80)},
		"gpu_a100_80gb":          {n("a100", 80)},
		// Partitions, accounts and QOS.
		"gpu_a100":        {n("a100", 0)},
		"kempner_h100":    {n("h100", 0)},
		"A40short":        {n("a40", 0)},
		"a100x4":          {n("a100", 0)}, // a partition of four-GPU nodes
		"gpuA100x4":       {n("a100", 0)},
		"A100m40":         {n("a100", 40)}, // a gres type naming the 40 GB model
		"v100g32":         {n("v100", 32)}, // a partition: the memory after the type, its unit first
		"v100gl":          {n("v100", 0)},  // a gres type: two letters after the type
		"gpu-h100s":       {n("h100", 0)},  // the type's plural
		"h100n3":          {n("h100", 0)},  // a node's number after the type
		"mi2104x":         {n("mi210", 0)}, // four MI210s a node
		"a40n":            nil,
		"a1000x":          nil, // no count starts with 0
		"gpuh100":         {n("h100", 0)},
		"gpusL40":         {n("l40", 0)},
		"gpus_a100":       {n("a100", 0)},
		"proj@h100":       {n("h100", 0)},
		"qos_gpu_h100-t4": {n("h100", 0), n("t4", 0)},
		"gpu_a100_a100":   {n("a100", 0)},
		// Names that name no GPU.
		"gpu":      nil,
		"ib":       nil,
		"80gb":     nil, // host memory as often as GPU memory
		"gpu1":     nil, // a node number
		"gpu8":     nil, // a GPU count
		"a1000":    nil,
		"a100x":    nil,
		"normal":   nil,
		"debug":    nil,
		"h100-4":   {n("h100", 0)},
		"":         nil,
		"a100-0g":  {n("a100", 0)},
		"skylake":  nil,
		"nvme,ssd": nil,
	}
	for in, want := range cases {
		t.Run(in, func(t *testing.T) {
			if diff := cmp.Diff(want, ReadGPUNames(in)); diff != "" {
				t.Errorf("ReadGPUNames(%q) (-want +got):\n%s", in, diff)
			}
		})
	}
	if got := ReadGPUNames(strings.Repeat("a100_", MaxGPUName)); got != nil {
		t.Errorf("an over-long name read %v", got)
	}
}

func TestGPUNameStringReadsBack(t *testing.T) {
	for _, g := range []GPUName{{"a100", 0}, {"v100", 32}, {"", 80}, {"rtx2080ti", 11}, {"l40s", 48}} {
		if got := ReadGPUNames(g.String()); !slices.Equal(got, []GPUName{g}) {
			t.Errorf("%+v wrote %q, which reads %v", g, g.String(), got)
		}
	}
}

func TestParseConstraintErrors(t *testing.T) {
	for _, in := range []string{"a100&", "|a100", "a100||v100", "[a100|v100", "a100]", "(a100", "a100*", "a100 v100",
		"!", "[]", strings.Repeat("[", MaxConstraintDepth+2) + "a" + strings.Repeat("]", MaxConstraintDepth+2),
		strings.Repeat("a", MaxConstraint+1)} {
		if _, err := ParseConstraint(in); !errors.Is(err, ErrBadConstraint) {
			t.Errorf("ParseConstraint(%q) = %v, want ErrBadConstraint", in, err)
		}
	}
}

func TestConstraintFeatures(t *testing.T) {
	c, err := ParseConstraint(`"[a100*2&ib|(v100,ib)]"`)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a100", "ib", "v100"}, c.Features()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if c, _ := ParseConstraint("  "); !c.IsEmpty() || c.Features() != nil {
		t.Error("blank constraint not empty")
	}
}

// TestConstraintMatches evaluates constraints against a node's features, as
// augurd does with the nodes slurmctld reports.
func TestConstraintMatches(t *testing.T) {
	node := map[string]bool{"a100": true, "ib": true, "80gb": true}
	cases := map[string]bool{
		"":                    true,
		"a100":                true,
		"v100":                false,
		"a100&ib":             true,
		"a100,ib":             true,
		"a100&nvme":           false,
		"v100|a100":           true,
		"[v100|a100]":         true,
		"[v100*2&a100*2]":     false,
		"(v100|a100)&ib":      true,
		"!v100":               true,
		"!a100":               false,
		"!(v100|nvme)":        true,
		"!(a100|nvme)":        false,
		"!(a100&nvme)":        true,
		"a100*4":              true,
		"ib&v100|a100":        true, // both readings agree
		"nvme&v100|a100|nvme": true, // the same in both readings
		// A group that mixes & and | is read both ways and holds only when
		// both hold: a100|(v100&nvme) with & first, (a100|v100)&nvme left
		// to right.
		"a100|v100&nvme": false,
	}
	for in, want := range cases {
		t.Run(in, func(t *testing.T) {
			c, err := ParseConstraint(in)
			if err != nil {
				t.Fatal(err)
			}
			got := Evaluate(c, func(f string, neg bool) bool { return f == "" || node[f] != neg },
				func(a, b bool) bool { return a && b }, func(a, b bool) bool { return a || b })
			if got != want {
				t.Errorf("%q on a100,ib,80gb = %v, want %v", in, got, want)
			}
		})
	}
}

func TestConstraintGPUs(t *testing.T) {
	names := func(ns ...string) GPUNameSet {
		var s GPUNameSet
		for _, n := range ns {
			s.Names = append(s.Names, ReadGPUNames(n)...)
		}
		return s
	}
	cases := map[string]GPUNameSet{
		"":                  AnyGPU,
		"ib":                AnyGPU,
		"a100":              names("a100"),
		"v100|a100":         names("v100", "a100"),
		"[v100|a100]":       names("v100", "a100"),
		`"[v100|a100]"`:     names("v100", "a100"),
		"v100-32g&ib":       names("v100-32g"),
		"volta32gb":         names("v100-32g"),
		"gpu80":             names("gpu80"),
		"v100&a100":         {},
		"v100&volta32gb":    names("v100-32g"),
		"a100|ib":           AnyGPU, // the ib branch limits nothing
		"(a100|v100)&ib":    names("a100", "v100"),
		"(a100|v100)&v100":  names("v100"),
		"!v100":             {},
		"!ib":               AnyGPU,
		"a100*2&v100*2":     {},
		"gpu80&a100":        names("a100-80g"),
		"[a100*1&ib*2]":     names("a100"),
		"a100|v100&ib":      names("a100", "v100"),
		"t4|a100&v100":      {}, // & first: t4|(a100&v100) = {t4}; left to right: (t4|a100)&v100 = {}
		"a100-40g|a100-80g": names("a100-40g", "a100-80g"),
	}
	for in, want := range cases {
		t.Run(in, func(t *testing.T) {
			c, err := ParseConstraint(in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, ConstraintGPUs(c)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestNameGPUs(t *testing.T) {
	cases := map[string]GPUNameSet{
		"gpu":             AnyGPU,
		"gpu_a100":        {Names: []GPUName{{"a100", 0}}},
		"gpu_a100,gpu_t4": {Names: []GPUName{{"a100", 0}, {"t4", 0}}},
		"gpu_a100,debug":  AnyGPU, // debug may hold anything
		"proj@h100":       {Names: []GPUName{{"h100", 0}}},
	}
	for in, want := range cases {
		if diff := cmp.Diff(want, NameGPUs(in)); diff != "" {
			t.Errorf("NameGPUs(%q) (-want +got):\n%s", in, diff)
		}
	}
}

// TestHeaderGPUType: a script that asks for GPUs without a type reports the
// type its constraint, partition, account or QOS implies; a gres type wins.
func TestHeaderGPUType(t *testing.T) {
	cases := map[string]struct{ header, typ, from string }{
		"constraint":  {"#SBATCH --gres=gpu:1\n#SBATCH --constraint=volta32gb\n", "v100-32g", "#SBATCH --constraint"},
		"-C quoted":   {"#SBATCH -C \"v100-32g\"\n", "v100-32g", "#SBATCH --constraint"},
		"matching or": {"#SBATCH -C [v100|a100]\n", "", ""},
		"or narrowed by partition": {"#SBATCH -C v100|a100\n#SBATCH -p gpu_a100\n", "a100",
			"#SBATCH --constraint + #SBATCH --partition"},
		"partition":      {"#SBATCH --partition=kempner_h100\n#SBATCH --gpus=2\n", "h100", "#SBATCH --partition"},
		"account":        {"#SBATCH -A proj@h100\n", "h100", "#SBATCH --account"},
		"qos":            {"#SBATCH --qos=qos_gpu_h100\n", "h100", "#SBATCH --qos"},
		"gres type wins": {"#SBATCH --gres=gpu:t4:1\n#SBATCH -C a100\n", "t4", "#SBATCH --gres"},
		"--gpus type":    {"#SBATCH --gpus=a100:2\n#SBATCH -p gpu_t4\n", "a100", "#SBATCH --gpus"},
		"typed gres beside an untyped --gpus-per-node of the same count": {
			"#SBATCH --gpus-per-node=1\n#SBATCH --gres=gpu:v100:1\n", "v100", "#SBATCH --gres"},
		"a name the constraint rules out":  {"#SBATCH -C v100\n#SBATCH -p gpu_a100\n", "v100", "#SBATCH --constraint"},
		"jean zay's time tier beside -C":   {"#SBATCH -C v100-32g\n#SBATCH --qos=qos_gpu-t4\n", "v100-32g", "#SBATCH --constraint"},
		"two names that disagree":          {"#SBATCH -p gpu_a100\n#SBATCH --qos=h100\n", "", ""},
		"bad constraint":                   {"#SBATCH -C a100&\n", "", ""},
		"nothing":                          {"#SBATCH -p gpu\n#SBATCH -C ib\n", "", ""},
		"ambiguous name":                   {"#SBATCH --qos=qos_gpu_h100-t4\n", "", ""},
		"reservation":                      {"#SBATCH --gres=gpu:2\n#SBATCH --reservation=A100\n", "a100", "#SBATCH --reservation"},
		"mila a100l":                       {"#SBATCH --gres=gpu:1\n#SBATCH -C a100l\n", "a100-80g", "#SBATCH --constraint"},
		"narrowed by QOS":                  {"#SBATCH -C h100|a100\n#SBATCH --qos=qos_gpu_h100-t4\n", "h100", "#SBATCH --constraint + #SBATCH --qos"},
		"a MIG profile alone names no GPU": {"#SBATCH --gres=gpu:4g.40gb:1\n", "", ""},
		"a MIG profile of a named GPU":     {"#SBATCH --gres=gpu:h100_3g.40gb:1\n", "h100_3g.40gb", "#SBATCH --gres"},
		"a MIG profile beside a partition naming the GPU": {"#SBATCH --gres=gpu:1g.10gb:4\n#SBATCH -p gpu_a100\n", "a100",
			"#SBATCH --partition"},
		"a maker's word names no GPU":     {"#SBATCH --gres=gpu:tesla:1\n", "", ""},
		"a memory alone names no GPU":     {"#SBATCH --gres=gpu:40g:1\n", "", ""},
		"a site's titan nodes are Titans": {"#SBATCH --gres=gpu:titan:2\n", "titan", "#SBATCH --gres"},
		"--gpus given a MIG profile":      {"#SBATCH --gpus=2g.20gb:1\n", "", ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := ParseScript("#!/bin/bash\n" + tc.header + "python train.py\n").Features
			if f.GPUType != tc.typ || f.From["gpu_type"] != tc.from {
				t.Errorf("gpu_type %q from %q, want %q from %q", f.GPUType, f.From["gpu_type"], tc.typ, tc.from)
			}
		})
	}
}

// TestHeaderDCU: Hygon's DCUs, asked for as gres dcu, are the job's
// accelerators where it asks for no gpu; shards of a GPU alone are one GPU.
func TestHeaderDCU(t *testing.T) {
	cases := map[string]struct {
		header string
		gpus   int
		typ    string
	}{
		"per node over nodes": {"#SBATCH -N 2\n#SBATCH --gres=dcu:4\n", 8, "dcu"},
		"typed":               {"#SBATCH --gres=dcu:k100:2\n", 2, "k100"},
		"gpu wins":            {"#SBATCH --gres=dcu:4,gpu:a100:1\n", 1, "a100"},
		"other gres":          {"#SBATCH --gres=tmpdisk:100\n", 0, ""},
		"shards of one GPU":   {"#SBATCH --gres=gpu:1 --gres=shard:22528\n", 1, ""},
		"typed shards":        {"#SBATCH --gres=shard:a100:4\n", 1, "a100"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := ParseScript("#!/bin/bash\n" + tc.header + "srun python train.py\n").Features
			if f.GPUs != tc.gpus || f.GPUType != tc.typ {
				t.Errorf("gpus %d of type %q, want %d of %q", f.GPUs, f.GPUType, tc.gpus, tc.typ)
			}
			if tc.gpus > 0 && f.From["gpus"] == "" {
				t.Errorf("no source for the count: %v", f.From)
			}
		})
	}
}

// FuzzConstraint: any string parses or fails with ErrBadConstraint, never
// panics; what parses evaluates, and a GPU type it allows is one some
// feature of it spells.
func FuzzConstraint(f *testing.F) {
	for _, s := range []string{"a100", "[v100|a100]", "v100-32g&ib", "volta32gb", "gpu80", "!(a100|ib)&[x*2|y]",
		"a|b&c,d", `"a100"`, "((((a))))", "a100*", "]["} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseConstraint(s)
		if err != nil {
			if !errors.Is(err, ErrBadConstraint) {
				t.Fatalf("error %v does not wrap ErrBadConstraint", err)
			}
			return
		}
		var spelled []GPUName
		for _, feat := range c.Features() {
			if feat == "" || strings.ContainsAny(feat, "&|,[]()*! \t\r\n") {
				t.Fatalf("feature %q of %q", feat, s)
			}
			spelled = append(spelled, ReadGPUNames(feat)...)
		}
		set := ConstraintGPUs(c)
		for _, g := range set.Names {
			ok := false
			for _, sp := range spelled {
				if _, meet := g.Meet(sp); meet {
					ok = true
				}
			}
			if !ok {
				t.Fatalf("%q allows %v, which none of its features spells (%v)", s, g, spelled)
			}
		}
		Evaluate(c, func(string, bool) bool { return true }, func(a, b bool) bool { return a && b },
			func(a, b bool) bool { return a || b })
	})
}

// FuzzReadGPUNames: any name reads without a panic, every name read is a
// known type or a memory, and writes back to itself.
func FuzzReadGPUNames(f *testing.F) {
	for _, s := range []string{"v100-32g", "volta32gb", "A40short", "proj@h100", "qos_gpu_h100-t4", "gpu80",
		"quadro_rtx_8000", "a100-sxm4-80gb", "\xff\x00a100"} {
		f.Add(s)
	}
	known := map[string]bool{"": true}
	for _, g := range gpuSpellings {
		known[g.Type] = true
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, g := range ReadGPUNames(s) {
			if !known[g.Type] || g.MemGiB < 0 || g.MemGiB > 1024 || (g.Type == "" && g.MemGiB == 0) {
				t.Fatalf("%q read as %+v", s, g)
			}
			if back := ReadGPUNames(g.String()); !slices.Equal(back, []GPUName{g}) {
				t.Fatalf("%q read as %+v, written %q, read back as %v", s, g, g.String(), back)
			}
		}
	})
}

func TestNodelistCountsNodes(t *testing.T) {
	for name, c := range map[string]struct {
		header []string
		want   int
	}{
		"two hosts, eight GPUs each": {[]string{"#SBATCH --nodelist=gpu-[6,17]", "#SBATCH --gpus-per-node=8"}, 16},
		"-w and a gres":              {[]string{"#SBATCH -w n1,n2,n3", "#SBATCH --gres=gpu:2"}, 6},
		"--nodes says how many":      {[]string{"#SBATCH --nodelist=gpu-[6,17]", "#SBATCH -N 1", "#SBATCH --gres=gpu:4"}, 4},
		"a file of hosts":            {[]string{"#SBATCH --nodelist=./hosts/list", "#SBATCH --gres=gpu:4"}, 4},
		"--gpus counts the job's":    {[]string{"#SBATCH --nodelist=gpu-[6,17]", "#SBATCH --gpus=4"}, 4},
	} {
		got := ParseScript(strings.Join(append([]string{"#!/bin/bash"}, c.header...), "\n") + "\npython train.py\n").Features.GPUs
		if got != c.want {
			t.Errorf("%s: GPUs = %d, want %d", name, got, c.want)
		}
	}
}

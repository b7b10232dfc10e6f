package predictor

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// maxConfigBytes bounds a config file's text parsed (augurd's default
// predictor.job_files.max_bytes): YAML parses at a few MB/s, and most
// configs are a few KB, the largest (OLMo's, with their lists of data
// files) about 150 KB; a larger one is not read.
const maxConfigBytes = 256 << 10

// configDocs keeps the config files parsed for a job's readings (those
// of one script, or the rounds of its files), by their text, so that each
// is parsed once; the documents are read, never changed. A nil
// configDocs parses every time.
type configDocs map[string]configDoc

type configDoc struct {
	v  any
	ok bool
}

// parse parses a YAML (or JSON) config's text.
func (d configDocs) parse(text string) (any, bool) {
	if doc, ok := d[text]; ok {
		return doc.v, doc.ok
	}
	var doc configDoc
	if len(text) <= maxConfigBytes {
		doc.ok = yaml.Unmarshal([]byte(text), &doc.v) == nil
	}
	if d != nil {
		d[text] = doc
	}
	return doc.v, doc.ok
}

// fileFeatures reads the config files a command names that the script
// wrote itself, in the order named.
func fileFeatures(words []string, files map[string]string, docs configDocs) (Features, bool) {
	var f Features
	found := false
	for _, w := range words {
		_, v, ok := strings.Cut(w, "=")
		if !ok {
			v = w
		}
		text, ok := files[v]
		if !ok {
			continue
		}
		switch strings.ToLower(path.Ext(v)) {
		case ".yaml", ".yml", ".json":
		default:
			if !unexpanded(v) {
				continue // a name the script shows, not a config's
			}
		}
		if cf, ok := configFileFeatures(path.Base(v), text, docs); ok {
			if found {
				cf = mergeFeatures(f, cf)
			}
			f, found = cf, true
		}
	}
	return f, found
}

// maxConfigArgs bounds the settings read from one config file.
const maxConfigArgs = 4096

// configFileFeatures reads a YAML or JSON config file the script itself
// wrote (a heredoc: an axolotl or LLaMA-Factory recipe, a DeepSpeed or
// accelerate config) as the program reading it would: its settings are
// read as the program's own flags (see argFeatures), nested sections as
// Lightning's and Hydra's dotted keys, and DeepSpeed's {"bf16":
// {"enabled": true}} and zero_optimization.stage as what they mean. Each
// feature's source names the file and the key.
func configFileFeatures(name, text string, docs configDocs) (Features, bool) {
	doc, ok := docs.parse(text)
	if !ok {
		return Features{}, false
	}
	top, ok := doc.(map[string]any)
	if !ok {
		return Features{}, false
	}
	var args []string
	deepspeed := top["zero_optimization"] != nil || top["train_micro_batch_size_per_gpu"] != nil
	flatten(top, "", deepspeed, &args)
	f := argFeatures(Features{}, args, launch{})
	for k, v := range f.From {
		f.From[k] = name + ": " + strings.TrimPrefix(v, "--")
	}
	return f, len(f.From) > 0
}

// flatten appends a config's settings to args as --key value pairs, in
// key order, sections as dotted keys.
func flatten(m map[string]any, prefix string, deepspeed bool, args *[]string) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if len(*args) >= maxConfigArgs {
			return
		}
		key := prefix + k
		switch v := m[k].(type) {
		case map[string]any:
			if en, ok := v["enabled"]; ok && prefix == "" && boolPrecision[normFlag(k)] != "" {
				// DeepSpeed's "bf16": {"enabled": true}; "auto" leaves it to the program's flags.
				if b, ok := en.(bool); ok && b {
					*args = append(*args, "--"+k)
				}
				continue
			}
			if k == "zero_optimization" {
				if s, ok := v["stage"]; ok {
					*args = append(*args, "--zero_stage", scalar(s))
				}
				continue
			}
			flatten(v, key+".", deepspeed, args)
		case []any:
			if key == "defaults" {
				hydraDefaults(v, args)
			}
			// Other lists (datasets, callbacks) say nothing read here.
		default:
			if deepspeed && key == "train_batch_size" {
				key = "global_batch_size" // DeepSpeed's train_batch_size is the global one
			}
			s := scalar(v)
			if s == "auto" && !deepspeed && boolPrecision[normFlag(k)] != "" {
				s = "true" // axolotl's bf16: auto, where the GPU has it
			}
			if b, ok := v.(bool); ok {
				if !b {
					continue // bf16: false
				}
				s = "true"
			}
			if s != "" {
				*args = append(*args, "--"+key, s)
			}
		}
	}
}

// hydraDefaults appends the config groups a Hydra config's defaults list
// chooses (hydraEntryOf) as the --group option pairs a command line's
// group=option overrides are read as: "- model: resnet50", "- override
// /model: mae_small", "- /model@net: unet" and "- optional data: cifar"
// choose the model resnet50, mae_small, unet and the data cifar, as
// model=resnet50 would on the command line. A config it includes
// (- base_train) is not read here.
func hydraDefaults(list []any, args *[]string) {
	for _, v := range list {
		if e, ok := hydraEntryOf(v); ok && e.group != "" && len(*args) < maxConfigArgs {
			*args = append(*args, "--"+strings.ReplaceAll(e.group, "/", "."), e.option)
		}
	}
}

// scalar prints a YAML scalar as it would be given on a command line.
func scalar(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case int:
		return strconv.Itoa(v)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(v)
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}

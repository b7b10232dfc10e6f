package predictor

import (
	"path"
	"regexp"
	"strings"
)

// Python code that a script runs inline (python - <<EOF ... EOF, python -c
// "...") is not parsed: Augur reads in it what a person skimming it reads,
// the literal arguments of the calls that load a model and the keyword
// arguments and assignments the flag readers know (batch_size=8,
// bf16=True, torch_dtype=torch.bfloat16). What the code computes is never
// evaluated. Go's regexp runs in time linear in the text, and the text is
// bounded, so the reading stays bounded.

// maxPythonCode bounds the inline code read (a longer heredoc is read up to it).
const maxPythonCode = 64 << 10

var (
	// pyModelCalls take a model's name as their first literal argument:
	// transformers' and diffusers' from_pretrained, timm.create_model,
	// ultralytics' YOLO, vLLM's LLM, sentence-transformers.
	pyModelCalls = regexp.MustCompile(`(?:\.from_pretrained|\bcreate_model|\bYOLO|\bRTDETR|\bLLM|\bSentenceTransformer)\(\s*(?:model\s*=\s*|pretrained_model_name_or_path\s*=\s*|model_name\s*=\s*)?["']([^"'\n]{1,200})["']`)
	// pyTorchvision is a torchvision constructor: models.resnet50(...).
	pyTorchvision = regexp.MustCompile(`\bmodels\.([a-z][a-z0-9_]{1,40})\(`)
	// pyKeyValues are keyword arguments, assignments and dict entries with
	// a literal value: a string, a number, a boolean or a torch dtype
	// (not a call: a = torch.ones(...) is a tensor).
	pyKeyValues = regexp.MustCompile(`["']?\b([A-Za-z_][A-Za-z0-9_]{0,60})["']?\s*[=:]\s*(?:"([^"\n]{0,200})"|'([^'\n]{0,200})'|(-?[0-9][0-9.eE+-]{0,20})\b|(True|False)\b|(torch\.(?:bfloat16|float16|float32|float64|half|float|double|float8_e4m3fn|float8_e5m2))\b)`)
)

// pythonArgs turns inline Python code into the flags it amounts to
// ("--batch_size", "8", "--model", "meta-llama/Llama-2-7b-hf"), for the
// readers of a program's arguments. The calls that load a model come
// last, so that they name the model over an assignment's guess.
func pythonArgs(code string) []string {
	if len(code) > maxPythonCode {
		code = code[:maxPythonCode]
	}
	var args []string
	for _, m := range pyKeyValues.FindAllStringSubmatch(code, -1) {
		v := ""
		for _, g := range m[2:] {
			if g != "" {
				v = g
				break
			}
		}
		if v == "" {
			continue
		}
		args = append(args, "--"+m[1], v)
	}
	for _, m := range pyTorchvision.FindAllStringSubmatch(code, -1) {
		if familyModel(m[1]) != "" {
			args = append(args, "--model", m[1])
		}
	}
	for _, m := range pyModelCalls.FindAllStringSubmatch(code, -1) {
		if !strings.Contains(m[1], "{") { // not an f-string's or a format's hole
			args = append(args, "--model", m[1])
		}
	}
	return args
}

// isPythonName reports whether a command word runs a Python interpreter
// (python, python3, python3.11, /opt/conda/bin/python).
func isPythonName(w string) bool {
	base := path.Base(w)
	return strings.HasPrefix(base, "python") && !strings.ContainsAny(base[6:], "-_")
}

// inlinePython finds Python code a command runs inline: the code of
// python -c, or the heredoc fed to python reading its stdin (python -,
// or python with no program). It returns the command with the code
// replaced by the flags it amounts to, the program being "-".
func inlinePython(words []string, heredoc func() (string, bool)) ([]string, bool) {
	p := -1
	for i, w := range words {
		if isPythonName(w) {
			p = i
			break
		}
	}
	if p < 0 {
		return nil, false
	}
	for j := p + 1; j <= len(words); j++ {
		if j == len(words) || words[j] == "-" {
			code, ok := heredoc()
			if !ok {
				return nil, false
			}
			rest := []string(nil)
			if j < len(words) {
				rest = words[j+1:]
			}
			out := append(append(append([]string(nil), words[:j]...), "-"), rest...)
			return append(out, pythonArgs(code)...), true
		}
		w := words[j]
		switch {
		case w == "-c" && j+1 < len(words):
			out := append(append([]string(nil), words[:j]...), "-")
			out = append(out, words[j+2:]...)
			return append(out, pythonArgs(words[j+1])...), true
		case w == "-m" || !strings.HasPrefix(w, "-"):
			return nil, false // a module or a program file: not inline code
		}
	}
	return nil, false
}

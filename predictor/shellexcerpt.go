package predictor

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// JobFileText is the text of a job's own file as augurd keeps it with the
// request (wire.Request.Files), which readings of the stored request read
// again: of a Python program, its option declarations (ProgramExcerpt); of
// a config, the file as it is; of a shell file the script sources, the
// file without its comments and secrets (ShellExcerpt). ok is false for a
// shell file that does not parse: it is not kept, and reads as not seen.
func JobFileText(p, text string) (string, bool) {
	switch ext := strings.ToLower(path.Ext(p)); {
	case ext == ".py":
		return ProgramExcerpt(text), true
	case jobFileExts[ext]:
		return text, true
	}
	return ShellExcerpt(text)
}

// ShellExcerpt is a sourced shell file (scripts/env.sh, .env) as augurd
// keeps it: printed again from its parse, without comments, the values of
// variables named for secrets (HF_TOKEN, WANDB_API_KEY, DB_PASSWORD) and
// the arguments of login commands (wandb login KEY, huggingface-cli login
// --token T) and of flags named for secrets emptied. Reading the excerpt
// is reading the file: nothing it drops sets the job's features. ok is
// false where the file does not parse as bash.
func ShellExcerpt(text string) (excerpt string, ok bool) {
	defer func() {
		// A file that makes the parser or printer panic is not kept.
		if recover() != nil {
			excerpt, ok = "", false
		}
	}()
	ex, ok := printExcerpt(text)
	if !ok {
		return "", false
	}
	// The printer does not give back every parse it is handed (a heredoc
	// in a command substitution before "fi"): an excerpt is kept only
	// where it is its own excerpt, so that it reads as it did.
	if again, ok := printExcerpt(ex); !ok || again != ex {
		return "", false
	}
	return ex, true
}

// printExcerpt parses text, empties its secrets and prints it again.
func printExcerpt(text string) (string, bool) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(text), "")
	if err != nil {
		return "", false
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Assign:
			if n.Name != nil && secretName(n.Name.Value) {
				n.Value, n.Array, n.Index = nil, nil, nil
			}
		case *syntax.CallExpr:
			n.Args = withoutSecrets(n.Args)
		}
		return true
	})
	var b strings.Builder
	if err := syntax.NewPrinter().Print(&b, f); err != nil {
		return "", false
	}
	return b.String(), true
}

// secretName reports whether a variable's or flag's name says it holds a
// secret: one ending in TOKEN, SECRET, PASSWORD or API_KEY and the like
// (HF_TOKEN, WANDB_API_KEY, AWS_SECRET_ACCESS_KEY, --hf-token), not one
// that counts tokens or names a key of the job's (MAX_TOKEN_LEN, MODEL_KEY).
func secretName(name string) bool {
	words := strings.FieldsFunc(strings.ToLower(name), func(r rune) bool { return r == '_' || r == '-' })
	if len(words) == 0 {
		return false
	}
	for _, w := range words {
		if w == "secret" || w == "password" || w == "passwd" {
			return true
		}
	}
	switch last := words[len(words)-1]; last {
	case "token", "apikey", "credentials", "credential", "cookie", "pat":
		return true
	case "key":
		if len(words) > 1 {
			switch words[len(words)-2] {
			case "api", "access", "private", "wandb", "auth", "license":
				return true
			}
		}
	}
	return false
}

// withoutSecrets is a command's words without what may be a secret: all
// after a login word (wandb login KEY, huggingface-cli login --token T,
// docker login -p P), and the value of a flag named for one
// (--token T, --api-key=K).
func withoutSecrets(args []*syntax.Word) []*syntax.Word {
	for i, a := range args {
		lit := a.Lit()
		if lit == "login" || strings.HasSuffix(lit, "-login") {
			return args[:i+1]
		}
		flag, _, eq := strings.Cut(lit, "=")
		if !strings.HasPrefix(flag, "-") || !secretName(strings.TrimLeft(flag, "-")) {
			continue
		}
		if eq {
			args[i] = &syntax.Word{Parts: []syntax.WordPart{&syntax.Lit{Value: flag + "="}}}
		} else if i+1 < len(args) {
			args[i+1] = &syntax.Word{Parts: []syntax.WordPart{&syntax.Lit{Value: `""`}}}
		}
	}
	return args
}

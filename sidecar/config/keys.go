package config

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
)

// checkKeys walks the file's own YAML tree against the schema of Config and
// names the first unknown keys with their full path and the keys that
// would be accepted there, which reads better than the decoder's message
// and also catches empty sections.
func checkKeys(raw map[string]any) error {
	var errs []string
	walkKeys("", raw, reflect.TypeOf(Config{}), &errs)
	if len(errs) == 0 {
		return nil
	}
	sort.Strings(errs)
	return fmt.Errorf("%s", strings.Join(errs, "; "))
}

func walkKeys(prefix string, node any, t reflect.Type, errs *[]string) {
	switch t.Kind() {
	case reflect.Struct:
		m, ok := node.(map[string]any)
		if !ok {
			return // a type error; the decoder reports it
		}
		fields := map[string]reflect.Type{}
		var names []string
		for i := 0; i < t.NumField(); i++ {
			tag := t.Field(i).Tag.Get("mapstructure")
			if tag == "" || tag == "-" {
				continue
			}
			fields[tag] = t.Field(i).Type
			names = append(names, tag)
		}
		for k, v := range m {
			key := k
			if prefix != "" {
				key = prefix + "." + k
			}
			ft, ok := fields[strings.ToLower(k)]
			if !ok {
				*errs = append(*errs, fmt.Sprintf("unknown key %q (known here: %s)", key, strings.Join(names, ", ")))
				continue
			}
			walkKeys(key, v, ft, errs)
		}
	case reflect.Slice:
		items, ok := node.([]any)
		if !ok {
			return
		}
		for i, it := range items {
			walkKeys(fmt.Sprintf("%s[%d]", prefix, i), it, t.Elem(), errs)
		}
	}
}

package core

import "reflect"

// IsNil reports whether v is nil, or an interface holding a nil pointer,
// map, slice, channel or function (a "typed nil"): a model declared as
// `var m *gemini.Model` and never assigned passes a plain `== nil` check and
// crashes at its first call, long after Add returned.
func IsNil(v any) bool {
	if v == nil {
		return true
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Chan, reflect.Func, reflect.Interface:
		return rv.IsNil()
	}
	return false
}

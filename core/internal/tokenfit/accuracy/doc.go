// Package accuracy holds the estimator's tests and benchmarks that read the
// fit corpus, the golden estimates or the Gemma-3 vocabulary subset in
// testdata, or count with the exact o200k tokenizer: its accuracy against
// exact counts (held-out, generated and hostile text), the golden file that
// pins every estimate, and the speed on the corpus. They live in this
// module, which is never released, so that core's module zip carries only
// what the estimator needs at run time and its fast unit tests.
package accuracy

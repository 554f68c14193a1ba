// Package plugintest holds the ADK v1 plugin's behaviour tests: the stress
// matrix, the strategies, usage, recovery, calibration and the rest, driven
// through the plugin's exported API (dot-imported) and the test kit. They
// live here rather than in the root package because go mod tidy, in a
// module that imports a package, also loads that package's tests: these
// measure the guard against the exact o200k tokenizer (contextguardtest/o200k),
// and a module that imports the plugin must not download the tokenizer for
// them. Nothing imports this package.
package plugintest

// Package plugintest holds the ADK v2 plugin's tests that measure it
// against the exact o200k tokenizer (adkv2/contextguardtest/o200k): the
// stress matrix through ADK v2's runner and the check against ADK v2.3's
// built-in compaction. They live here rather than beside the plugin because
// go mod tidy, in a module that imports a package, also loads that
// package's tests, and a module that imports the plugin must not download
// the tokenizer for them. Nothing imports this package.
package plugintest

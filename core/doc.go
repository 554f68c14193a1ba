// Package core is contextguard's engine, free of any ADK package: it decides
// what each model request of an agent carries so that it fits the model's
// context window. The plugins for ADK-Go v1 (the root module) and v2
// (module adkv2) are thin adapters over it (ARCHITECTURE.md, Packages and
// modules).
package core

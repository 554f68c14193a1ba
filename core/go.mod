module github.com/adk-contextguard/contextguard/core

go 1.26.6

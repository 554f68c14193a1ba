module github.com/adk-contextguard/contextguard/adkv2

go 1.26.6

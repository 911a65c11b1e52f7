import IAPToolsCLI

await ToolEntry.bench()

import IAPToolsCLI

await ToolEntry.drill()

import IAPToolsCLI

await ToolEntry.appleSim()

import IAPControlCLI

await ControlEntry.main()

import IAPIntakeCLI

await IntakeEntry.main()

import EmulatorApp

CommandLineTool.main()

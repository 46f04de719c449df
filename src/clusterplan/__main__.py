from clusterplan.cli.main import entry

entry()

#!/usr/bin/env python3
"""Quartz 2.3.2 (Debian libquartz2-java, Java 17) — driver not written yet.

To do (bench/run already has install_quartz(): apt-get libquartz2-java libpostgresql-jdbc-java
when missing, then javac Driver.java against quartz_classpath()): a Driver.java that creates the
QRTZ_ tables (tables_postgres.sql ships in the Debian package's docs or the quartz jar), starts a
StdScheduler with org.quartz.jobStore.class=JobStoreTX, driverDelegateClass=PostgreSQLDelegate,
isClustered=true, threadPool.threadCount=C, batchTriggerAcquisitionMaxCount=C, schedules N
no-op jobs with a SimpleTrigger due now, and reports the drain rate in the same JSON line.
"""
import json, sys

args = sys.argv[1:]
workload = args[args.index("--workload") + 1] if "--workload" in args else "drain"
print(json.dumps({"peer": "quartz", "version": "2.3.2", "workload": workload,
                  "error": "driver not written yet (bench/peers/quartz/driver.py is a stub)"}))

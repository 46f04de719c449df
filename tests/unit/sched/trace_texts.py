"""Small trace files, one of each format the readers take."""

SWF = """\
; Version: 2.2
; Computer: test
;MaxProcs: 64
; Note: first note
; Note: second note
    1        0   10   100.5  4  -1 -1  4   200  -1 1  3  1 -1  1  2 -1 -1
    2       5.5  -1    50    -1  -1 -1  8   -1   -1 1  4  1 -1  1  1 -1 -1
    3       7     0    -1    2  -1 -1  2   100  -1 5  3  1 -1  1  1 -1 -1
    4       8     0   300    2  -1 -1  2   100  -1 1  3  1 -1  1  1 -1 -1
"""
HELIOS = """\
job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue
1,u1,vcA,8,48,1,COMPLETED,2020-04-01 00:00:00,2020-04-01 00:00:30,2020-04-01 01:00:30,3600,30
2,u2,vcB,0,4,1,COMPLETED,2020-04-01 00:01:00,2020-04-01 00:01:00,2020-04-01 00:02:00,60,0
3,u1,vcA,16,96,2,FAILED,2020-04-01 00:02:00,2020-04-01 00:05:00,2020-04-01 00:15:00,600,180
"""

ALIBABA = """\
name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time
openb-pod-0000,12000,16384,1,1000,,LS,Running,0,12537496,0
openb-pod-0001,6000,12288,1,460,,BE,Succeeded,100,400,160
openb-pod-0002,6000,12288,2,1000,,LS,Pending,200,,
"""

TIRESIAS = """\
job_id,num_gpu,submit_time,iterations,model_name,duration,interval
0,1,0,606,vgg19,164,30
1,8,30,133,vgg11,147,23
"""

SACCT = """\
JobID|JobIDRaw|User|Partition|QOS|Submit|Start|End|Elapsed|Timelimit|State|NNodes|AllocTRES
100|100|alice|gpu|normal|2024-03-01T00:00:00|2024-03-01T00:01:00|2024-03-01T01:01:00|01:00:00|02:00:00|COMPLETED|1|billing=8,cpu=8,gres/gpu=4,mem=64G,node=1
100.batch|100.batch||||2024-03-01T00:01:00|2024-03-01T00:01:00|2024-03-01T01:01:00|01:00:00||COMPLETED|1|cpu=8,gres/gpu=4,mem=64G,node=1
101_3|101|bob|gpu|high|2024-03-01T00:10:00|2024-03-01T00:10:00|2024-03-02T00:10:00|1-00:00:00|1-00:00:00|TIMEOUT|2|cpu=64,gres/gpu:h100=16,node=2
102|102|alice|gpu|normal|2024-03-01T00:20:00|Unknown|Unknown|00:00:00|01:00:00|PENDING|1|
103|103|carol|cpu|normal|2024-03-01T00:30:00|2024-03-01T00:30:00|Unknown|00:05:00|UNLIMITED|RUNNING|1|cpu=4,node=1
"""

PHILLY = """[
 {"status": "Pass", "vc": "vc1", "jobid": "application_1", "user": "u1", "submitted_time": "2017-10-01 00:00:00",
  "attempts": [{"start_time": "2017-10-01 00:01:00", "end_time": "2017-10-01 00:11:00",
                "detail": [{"ip": "m1", "gpus": ["gpu0", "gpu1"]}]},
               {"start_time": "2017-10-01 00:20:00", "end_time": "2017-10-01 01:01:00",
                "detail": [{"ip": "m1", "gpus": ["gpu0", "gpu1"]}, {"ip": "m2", "gpus": ["gpu0", "gpu1"]}]}]},
 {"status": "Killed", "vc": "vc2", "jobid": "application_2", "user": "u2", "submitted_time": "2017-10-01 00:05:00",
  "attempts": []}
]"""

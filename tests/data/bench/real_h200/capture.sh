#!/usr/bin/env bash
# Records real GPU tool outputs on the lent H200 machine for gpuvet's parser tests.
# Every command is bounded; failures are recorded, not fatal.
set -u
D=$(mktemp -d)/h200; mkdir -p "$D"
run() { local name=$1; shift; { timeout 60 "$@"; echo "### exit=$?"; } >"$D/$name" 2>&1; }
cd "$(dirname "$0")"
run version.txt nvidia-smi --version
run table_idle.txt nvidia-smi
run q_idle.txt nvidia-smi -q
run q_x_idle.xml nvidia-smi -q -x
run q_d_perf_clock_ecc_idle.txt nvidia-smi -q -d PERFORMANCE,CLOCK,ECC,MEMORY,TEMPERATURE,POWER,PCIE
run list.txt nvidia-smi -L
run topo.txt nvidia-smi topo -m
run nvlink_status.txt nvidia-smi nvlink -s
run inventory.csv nvidia-smi --query-gpu=index,name,memory.total,driver_version,pci.bus_id --format=csv
run inventory_noheader_nounits.csv nvidia-smi --query-gpu=index,name,memory.total,driver_version,pci.bus_id --format=csv,noheader,nounits
run health.csv nvidia-smi --query-gpu=index,name,pci.bus_id,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max,temperature.gpu,power.draw,power.limit,clocks_throttle_reasons.active,ecc.errors.uncorrected.volatile.total,retired_pages.pending --format=csv
run health_event_reasons.csv nvidia-smi --query-gpu=index,clocks_event_reasons.active,clocks_throttle_reasons.active --format=csv
run dmon_idle.txt nvidia-smi dmon -c 3
run inventory_probe.txt bash -c "$(cat inventory_script.sh)"
run disk_probe.txt bash -c "$(cat disk_script.sh)" disk /tmp
run lsblk_default.txt lsblk
run lsblk_no_rota.txt lsblk -d -o NAME,TRAN,MODEL,SIZE,TYPE
run lsblk_json_no_rota.json lsblk -J -d -o NAME,TRAN,MODEL,SIZE,TYPE
run lsblk_full_json.json lsblk -J -d -O
run tools.txt bash -c 'for t in fio iperf3 ib_write_bw ibv_devinfo dcgmi nv-hostengine all_reduce_perf nvcc lsblk findmnt; do printf "%s: " $t; command -v $t || echo missing; done; uname -a; cat /etc/os-release; python3 -c "import torch;print(torch.__version__, torch.cuda.get_device_name(0))"'
# Under load: the probe's own sampling script with its torch workload (8 s), and -q / table mid-load.
python3 -c "$(cat workload.py)" 14 >"$D/workload_bg.txt" 2>&1 &
W=$!
sleep 4
run table_load.txt nvidia-smi
run q_load.txt nvidia-smi -q
run q_d_perf_load.txt nvidia-smi -q -d PERFORMANCE,UTILIZATION,CLOCK,POWER
run dmon_load.txt nvidia-smi dmon -c 3
run health_load.csv nvidia-smi --query-gpu=index,name,pci.bus_id,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max,temperature.gpu,power.draw,power.limit,clocks_throttle_reasons.active,ecc.errors.uncorrected.volatile.total,retired_pages.pending --format=csv
wait $W
run sampling_probe_output.txt bash -c "$(cat sampling_script.sh)" sampling 8 500 python3 -c "$(cat workload.py)" 8
run sampling_idle.txt bash -c "$(cat sampling_script.sh)" sampling 3 500
if command -v dcgmi >/dev/null; then run dcgmi_diag_r1.json dcgmi diag -r 1 -j; fi
if command -v fio >/dev/null; then
  for n in 1 2 8; do
    run fio_write_nj${n}_group.json fio --name=ckpt --rw=write --bs=1M --numjobs=$n --size=256M --fsync=32 --end_fsync=1 --group_reporting --output-format=json --directory=/tmp
    run fio_write_nj${n}_nogroup.json fio --name=ckpt --rw=write --bs=1M --numjobs=$n --size=256M --fsync=32 --end_fsync=1 --output-format=json --directory=/tmp
  done
  rm -f /tmp/ckpt.*
fi
tar -C "$(dirname "$D")" -czf "$OUT/h200_outputs.tar.gz" h200
ls -la "$D"

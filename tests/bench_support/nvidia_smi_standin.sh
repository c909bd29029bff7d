#!/bin/sh
# Stand-in nvidia-smi for machines without a GPU: prints recorded output for the queries gpuvet makes.
# Installed (by tests/bench_support/gpu.py) as `nvidia-smi` first on a test sshd's PATH, with @DATA@
# replaced by the folder of recorded outputs; like the real one, `-lms` keeps running until killed.
DATA='@DATA@'
INVENTORY='@INVENTORY@'
SAMPLING='@SAMPLING@'
HEALTH='@HEALTH@'
case " $* " in
  *" --version "*) cat "$DATA/version.txt" ;;
  *"--query-gpu=index,name,pci.bus_id,pcie.link"*) cat "$DATA/$HEALTH" ;;
  *"--query-gpu=index,name"*) cat "$DATA/$INVENTORY" ;;
  *"--query-gpu=timestamp"*"-lms"*)
    head -n 1 "$DATA/$SAMPLING"
    tail -n +2 "$DATA/$SAMPLING" | while IFS= read -r line; do
      printf '%s\n' "$line"
      sleep 0.05
    done
    exec sleep 3600 ;;
  " -L ") tail -n +2 "$DATA/$INVENTORY" | while IFS=, read -r index name rest; do
      printf 'GPU %s:%s (UUID: GPU-00000000-0000-0000-0000-00000000000%s)\n' "$index" "$name" "$index"
    done ;;
  "  ") cat "$DATA/banner_h800.txt" ;;
  *) echo "stand-in nvidia-smi: unsupported arguments: $*" >&2; exit 2 ;;
esac

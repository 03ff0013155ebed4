;; The scan behind the JSON recognizers' long strings (src/envelope/plain-runs.ts): where a run of bytes that need no
;; attention inside a JSON string ends. Compiled by scripts/gen-wasm.ts into plain-run-wasm.ts (the bytes, in base64);
;; a test recompiles it and compares, so edit this file and run `npx tsx scripts/gen-wasm.ts`.
;;
;; Why WebAssembly: in JavaScript a byte costs about 20 instructions on Node 20 (a typed-array load with its map and
;; bounds checks, four compares, the loop's overflow and stack checks); here sixteen bytes cost about ten.
(module
  ;; One page (64 KiB) and no more: the caller copies a text in at most a page at a time.
  (memory (export "memory") 1 1)

  ;; The first offset in [i, end) whose byte is a quote (0x22), a backslash (0x5c) or a control character (below
  ;; 0x20); `end` when there is none. 0 <= i <= end <= 65536.
  (func (export "plainRunEnd") (param $i i32) (param $end i32) (result i32)
    (local $v v128)
    (local $b i32)
    ;; Sixteen bytes at a time while sixteen remain: stop at the first block holding a byte of interest.
    (block $tail
      (loop $blocks
        (br_if $tail (i32.gt_u (i32.add (local.get $i) (i32.const 16)) (local.get $end)))
        (local.set $v (v128.load align=1 (local.get $i)))
        (br_if $tail
          (v128.any_true
            (v128.or
              (i8x16.lt_u (local.get $v) (v128.const i8x16 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20))
              (v128.or
                (i8x16.eq (local.get $v) (v128.const i8x16 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22))
                (i8x16.eq (local.get $v) (v128.const i8x16 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c))))))
        (local.set $i (i32.add (local.get $i) (i32.const 16)))
        (br $blocks)))
    ;; Byte by byte through the block that stopped the loop, or the last few bytes.
    (block $found
      (loop $bytes
        (br_if $found (i32.ge_u (local.get $i) (local.get $end)))
        (local.set $b (i32.load8_u (local.get $i)))
        (br_if $found (i32.lt_u (local.get $b) (i32.const 0x20)))
        (br_if $found (i32.eq (local.get $b) (i32.const 0x22)))
        (br_if $found (i32.eq (local.get $b) (i32.const 0x5c)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $bytes)))
    (local.get $i)))

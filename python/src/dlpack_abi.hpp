// The DLPack ABI (dmlc/dlpack, v0.8: the layout PyTorch 1.13 and NumPy >= 1.22 exchange), declared
// from the published struct layout: DLDevice, DLDataType, DLTensor, DLManagedTensor. A capsule
// named "dltensor" carries a DLManagedTensor*; the consumer renames it "used_dltensor" and calls
// the deleter when it no longer needs the memory. Only the fields and codes ampkit reads or
// writes are named.
#pragma once

#include <cstdint>

namespace ampkit::python::dlpack {

// DLDeviceType (an enum of int size in the C header).
inline constexpr std::int32_t kDLCPU = 1;
inline constexpr std::int32_t kDLCUDA = 2;
inline constexpr std::int32_t kDLCUDAHost = 3;  // pinned host memory: host memory to ampkit
inline constexpr std::int32_t kDLCUDAManaged = 13;

// DLDataTypeCode.
inline constexpr std::uint8_t kDLInt = 0;
inline constexpr std::uint8_t kDLUInt = 1;
inline constexpr std::uint8_t kDLFloat = 2;
inline constexpr std::uint8_t kDLBfloat = 4;

struct DLDevice {
  std::int32_t device_type;
  std::int32_t device_id;
};

struct DLDataType {
  std::uint8_t code;
  std::uint8_t bits;
  std::uint16_t lanes;
};

struct DLTensor {
  void* data;
  DLDevice device;
  std::int32_t ndim;
  DLDataType dtype;
  std::int64_t* shape;
  std::int64_t* strides;  // in elements; null: compact row-major
  std::uint64_t byte_offset;
};

struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor* self);
};

inline constexpr const char* kCapsuleName = "dltensor";
inline constexpr const char* kUsedCapsuleName = "used_dltensor";

}  // namespace ampkit::python::dlpack

// The memory profiler's hot loops in C (python/ccalloc/_profiler_ext.py
// builds this with the Python headers only, at first use): module tags
// without a Python frame per module call (Switch, TagForward, installed by
// python/ccalloc/profiler.py), and the per-tensor scans of its phase
// boundaries (scan_grads, data_ptrs, state_ids, used by
// python/ccalloc/_profiler_accounting.py).
//
// Module tags.
// A forward hook pair costs a module call two Python frames and, more than
// that, PyTorch's slow path of Module._call_impl (the one taken once any hook
// is registered), several times a plain call. A TagForward instead replaces
// the module's `forward` attribute: _call_impl keeps its fast path and calls
// it, and it sets the module's tag (one call through the plugin's
// ccalloc_torch_set_tag, a thread-local store), calls the forward it wraps,
// and puts the previous tag back, also when the forward raises. It sets tags
// only while its Switch is on (the profiler's forward phase with module tags)
// and on the Switch's thread (the profiler's): elsewhere it only calls through.
//
// The scans. At a boundary the profiler reads each parameter's .grad, its
// id and data pointer, and a weak reference to it (which flags its death);
// each parameter's data pointer at a step's start; the ids of the optimizer
// state's values after each optimizer step. In Python each of those is a
// pass over the tensors with a list built per pass, about 1.5 us per
// parameter in all on the host where it was measured (bench/profiler_overhead.py);
// here each is one loop making one bytes object, the Python attribute and
// method calls on the tensors (the same ones) being what is left.
//
// May call: the Python C API and the function whose address the Switch is
// given. Nothing of torch or of the plugin is included or linked.

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pythread.h>
#include <structmember.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace {

using SetTagFn = std::uint32_t (*)(std::uint32_t);

struct Switch {
  PyObject_HEAD
  SetTagFn set_tag;
  int on;                  // set tags (the profiler's forward phase)
  unsigned long thread;    // only on this thread (PyThread_get_thread_ident)
};

struct TagForward {
  PyObject_HEAD
  Switch* sw;              // owned
  PyObject* wrapped;       // owned: what `forward` was (a bound method, usually)
  std::uint32_t tag;
#if PY_VERSION_HEX >= 0x03090000
  vectorcallfunc vectorcall;   // TagForwardVectorcall: no argument tuple built per call
#endif
};

PyTypeObject SwitchType = {PyVarObject_HEAD_INIT(nullptr, 0)};
PyTypeObject TagForwardType = {PyVarObject_HEAD_INIT(nullptr, 0)};

PyObject* SwitchNew(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  unsigned long long address = 0;
  static const char* kwlist[] = {"set_tag_address", nullptr};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "K", const_cast<char**>(kwlist), &address)) {
    return nullptr;
  }
  if (address == 0) {
    PyErr_SetString(PyExc_ValueError, "set_tag_address is 0");
    return nullptr;
  }
  auto* self = reinterpret_cast<Switch*>(type->tp_alloc(type, 0));
  if (self == nullptr) return nullptr;
  self->set_tag = reinterpret_cast<SetTagFn>(static_cast<std::uintptr_t>(address));
  self->on = 0;
  self->thread = PyThread_get_thread_ident();
  return reinterpret_cast<PyObject*>(self);
}

PyMemberDef kSwitchMembers[] = {
    {const_cast<char*>("on"), T_INT, offsetof(Switch, on), 0,
     const_cast<char*>("nonzero: TagForwards of this switch set their tags")},
    {const_cast<char*>("thread"), T_ULONG, offsetof(Switch, thread), 0,
     const_cast<char*>("the thread they set tags on (threading.get_ident())")},
    {nullptr, 0, 0, 0, nullptr}};

#if PY_VERSION_HEX >= 0x03090000
// What Module._call_impl's `forward_call(*args, **kwargs)` reaches (through
// PyVectorcall_Call): the arguments go on to the forward as they came.
PyObject* TagForwardVectorcall(PyObject* op, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  auto* self = reinterpret_cast<TagForward*>(op);
  Switch* sw = self->sw;
  if (sw == nullptr || self->wrapped == nullptr) {   // cleared by the garbage collector (tp_clear)
    PyErr_SetString(PyExc_RuntimeError, "ccalloc TagForward: cleared");
    return nullptr;
  }
  if (!sw->on || PyThread_get_thread_ident() != sw->thread) {
    return PyObject_Vectorcall(self->wrapped, args, nargsf, kwnames);
  }
  const std::uint32_t previous = sw->set_tag(self->tag);
  PyObject* result = PyObject_Vectorcall(self->wrapped, args, nargsf, kwnames);
  sw->set_tag(previous);
  return result;
}
#endif

PyObject* TagForwardNew(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  PyObject* sw = nullptr;
  PyObject* wrapped = nullptr;
  unsigned int tag = 0;
  static const char* kwlist[] = {"switch", "wrapped", "tag", nullptr};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!OI", const_cast<char**>(kwlist), &SwitchType, &sw,
                                   &wrapped, &tag)) {
    return nullptr;
  }
  if (!PyCallable_Check(wrapped)) {
    PyErr_SetString(PyExc_TypeError, "wrapped must be callable");
    return nullptr;
  }
  auto* self = reinterpret_cast<TagForward*>(type->tp_alloc(type, 0));
  if (self == nullptr) return nullptr;
  Py_INCREF(sw);
  Py_INCREF(wrapped);
  self->sw = reinterpret_cast<Switch*>(sw);
  self->wrapped = wrapped;
  self->tag = tag;
#if PY_VERSION_HEX >= 0x03090000
  self->vectorcall = TagForwardVectorcall;
#endif
  return reinterpret_cast<PyObject*>(self);
}

[[maybe_unused]] PyObject* TagForwardCall(PyObject* op, PyObject* args, PyObject* kwargs) {
  auto* self = reinterpret_cast<TagForward*>(op);
  Switch* sw = self->sw;
  if (sw == nullptr || self->wrapped == nullptr) {   // cleared by the garbage collector (tp_clear) while still reachable
    PyErr_SetString(PyExc_RuntimeError, "ccalloc TagForward: cleared");
    return nullptr;
  }
  if (!sw->on || PyThread_get_thread_ident() != sw->thread) {
    return PyObject_Call(self->wrapped, args, kwargs);
  }
  const std::uint32_t previous = sw->set_tag(self->tag);
  PyObject* result = PyObject_Call(self->wrapped, args, kwargs);
  sw->set_tag(previous);
  return result;
}

// Attributes it does not have are the wrapped forward's (__name__, __self__,
// __func__, __signature__ ...), so code that inspects module.forward sees
// the forward; __wrapped__ (inspect.signature follows it) is the forward.
PyObject* TagForwardGetattr(PyObject* op, PyObject* name) {
  PyObject* r = PyObject_GenericGetAttr(op, name);
  if (r != nullptr || !PyErr_ExceptionMatches(PyExc_AttributeError)) return r;
  PyErr_Clear();
  return PyObject_GetAttr(reinterpret_cast<TagForward*>(op)->wrapped, name);
}

// copy.deepcopy(model) while profiled (an EMA copy, say): the copy gets a
// deep copy of the forward (its own bound method), not this profiler's tags.
PyObject* TagForwardDeepcopy(PyObject* op, PyObject* memo) {
  PyObject* copy = PyImport_ImportModule("copy");
  if (copy == nullptr) return nullptr;
  PyObject* r = PyObject_CallMethod(copy, "deepcopy", "OO", reinterpret_cast<TagForward*>(op)->wrapped, memo);
  Py_DECREF(copy);
  return r;
}

// Pickled (torch.save(model) while profiled) as the forward it wraps.
PyObject* TagForwardReduce(PyObject* op, PyObject*) {
  return PyObject_CallMethod(reinterpret_cast<TagForward*>(op)->wrapped, "__reduce__", nullptr);
}

PyObject* TagForwardGetTag(PyObject* op, void*) {
  return PyLong_FromUnsignedLong(reinterpret_cast<TagForward*>(op)->tag);
}

PyObject* TagForwardGetSwitch(PyObject* op, void*) {
  PyObject* sw = reinterpret_cast<PyObject*>(reinterpret_cast<TagForward*>(op)->sw);
  Py_INCREF(sw);
  return sw;
}

int TagForwardTraverse(PyObject* op, visitproc visit, void* arg) {
  auto* self = reinterpret_cast<TagForward*>(op);
  Py_VISIT(self->wrapped);   // a bound method: the module, whose __dict__ holds this
  Py_VISIT(reinterpret_cast<PyObject*>(self->sw));
  return 0;
}

int TagForwardClear(PyObject* op) {
  auto* self = reinterpret_cast<TagForward*>(op);
  Py_CLEAR(self->wrapped);
  Py_CLEAR(self->sw);
  return 0;
}

void TagForwardDealloc(PyObject* op) {
  PyObject_GC_UnTrack(op);
  TagForwardClear(op);
  Py_TYPE(op)->tp_free(op);
}

PyMethodDef kTagForwardMethods[] = {
    {"__deepcopy__", TagForwardDeepcopy, METH_O, nullptr},
    {"__reduce__", TagForwardReduce, METH_NOARGS, nullptr},
    {nullptr, nullptr, 0, nullptr}};

PyMemberDef kTagForwardMembers[] = {
    {const_cast<char*>("__wrapped__"), T_OBJECT, offsetof(TagForward, wrapped), READONLY, nullptr},
    {nullptr, 0, 0, 0, nullptr}};

PyGetSetDef kTagForwardGetset[] = {
    {const_cast<char*>("tag"), TagForwardGetTag, nullptr, nullptr, nullptr},
    {const_cast<char*>("switch"), TagForwardGetSwitch, nullptr, nullptr, nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

// --- the scans ---------------------------------------------------------------

PyObject* kGrad = nullptr;      // interned "grad"
PyObject* kDataPtr = nullptr;   // interned "data_ptr"

PyObject* Bytes(const std::vector<std::uint64_t>& v) {
  return PyBytes_FromStringAndSize(reinterpret_cast<const char*>(v.data()),
                                   static_cast<Py_ssize_t>(v.size() * sizeof(std::uint64_t)));
}

// tensor.data_ptr() as a uint64; false with an exception set.
bool DataPtr(PyObject* tensor, std::uint64_t* out) {
  PyObject* r = PyObject_CallMethodObjArgs(tensor, kDataPtr, nullptr);
  if (r == nullptr) return false;
  *out = PyLong_AsUnsignedLongLong(r);
  Py_DECREF(r);
  return !PyErr_Occurred();
}

// scan_grads(params, previous, on_death): None when the ids of the params'
// .grad (None included) are `previous` (bytes of uint64 ids); else (ids,
// pointers of the live gradients, weak references to them with callback
// on_death), ids and pointers as bytes of uint64s. What
// _Accounting._grad_blocks does in Python when this is not built.
PyObject* ScanGrads(PyObject*, PyObject* args) {
  PyObject* params = nullptr;
  PyObject* previous = nullptr;
  PyObject* on_death = nullptr;
  if (!PyArg_ParseTuple(args, "O!OO", &PyList_Type, &params, &previous, &on_death)) return nullptr;
  const Py_ssize_t n = PyList_GET_SIZE(params);
  std::vector<PyObject*> grads;
  std::vector<std::uint64_t> ids;
  grads.reserve(n);
  ids.reserve(n);
  PyObject* result = nullptr;
  PyObject* refs = nullptr;
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* g = PyObject_GetAttr(PyList_GET_ITEM(params, i), kGrad);
    if (g == nullptr) goto done;
    grads.push_back(g);
    ids.push_back(reinterpret_cast<std::uintptr_t>(g));
  }
  if (PyBytes_Check(previous) &&
      PyBytes_GET_SIZE(previous) == static_cast<Py_ssize_t>(ids.size() * sizeof(std::uint64_t)) &&
      (ids.empty() || std::memcmp(PyBytes_AS_STRING(previous), ids.data(),
                                  ids.size() * sizeof(std::uint64_t)) == 0)) {
    Py_INCREF(Py_None);
    result = Py_None;
    goto done;
  }
  {
    std::vector<std::uint64_t> ptrs;
    ptrs.reserve(n);
    refs = PyList_New(0);
    if (refs == nullptr) goto done;
    for (PyObject* g : grads) {
      if (g == Py_None) continue;
      std::uint64_t ptr = 0;
      if (!DataPtr(g, &ptr)) goto done;
      ptrs.push_back(ptr);
      PyObject* ref = PyWeakref_NewRef(g, on_death);
      if (ref == nullptr) goto done;
      const int failed = PyList_Append(refs, ref);
      Py_DECREF(ref);
      if (failed) goto done;
    }
    PyObject* id_bytes = Bytes(ids);
    PyObject* ptr_bytes = id_bytes == nullptr ? nullptr : Bytes(ptrs);
    if (ptr_bytes != nullptr) result = PyTuple_Pack(3, id_bytes, ptr_bytes, refs);
    Py_XDECREF(id_bytes);
    Py_XDECREF(ptr_bytes);
  }
done:
  for (PyObject* g : grads) Py_DECREF(g);
  Py_XDECREF(refs);
  return result;
}

// data_ptrs(tensors): their data_ptr()s as bytes of uint64s.
PyObject* DataPtrs(PyObject*, PyObject* tensors) {
  if (!PyList_Check(tensors)) {
    PyErr_SetString(PyExc_TypeError, "data_ptrs takes a list");
    return nullptr;
  }
  const Py_ssize_t n = PyList_GET_SIZE(tensors);
  std::vector<std::uint64_t> ptrs(static_cast<std::size_t>(n));
  for (Py_ssize_t i = 0; i < n; ++i) {
    if (!DataPtr(PyList_GET_ITEM(tensors, i), &ptrs[i])) return nullptr;
  }
  return Bytes(ptrs);
}

// state_ids(state): the ids of the values of each dict among state's
// values (an optimizer's state: {param: {name: value}}), in order, as
// bytes of uint64s; what list(map(id, chain(map(dict.values,
// state.values())))) gives, without a list of the values.
PyObject* StateIds(PyObject*, PyObject* state) {
  if (!PyDict_Check(state)) {
    PyErr_SetString(PyExc_TypeError, "state_ids takes a dict");
    return nullptr;
  }
  std::vector<std::uint64_t> ids;
  Py_ssize_t pos = 0;
  PyObject* key = nullptr;
  PyObject* inner = nullptr;
  while (PyDict_Next(state, &pos, &key, &inner)) {
    if (!PyDict_Check(inner)) {
      PyErr_SetString(PyExc_TypeError, "state_ids: a value of the state is not a dict");
      return nullptr;
    }
    Py_ssize_t at = 0;
    PyObject* name = nullptr;
    PyObject* value = nullptr;
    while (PyDict_Next(inner, &at, &name, &value)) ids.push_back(reinterpret_cast<std::uintptr_t>(value));
  }
  return Bytes(ids);
}

PyMethodDef kFunctions[] = {
    {"scan_grads", ScanGrads, METH_VARARGS, "scan_grads(params, previous, on_death) (see the source)"},
    {"data_ptrs", DataPtrs, METH_O, "data_ptrs(tensors) -> bytes of uint64 data pointers"},
    {"state_ids", StateIds, METH_O, "state_ids(optimizer_state) -> bytes of uint64 ids of its values"},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef kModule = {PyModuleDef_HEAD_INIT, "_ccalloc_profiler_ext",
                       "ccalloc's memory profiler's hot loops in C (see the source).", -1,
                       kFunctions, nullptr, nullptr, nullptr, nullptr};

}  // namespace

PyMODINIT_FUNC PyInit__ccalloc_profiler_ext(void) {
  SwitchType.tp_name = "_ccalloc_profiler_ext.Switch";
  SwitchType.tp_basicsize = sizeof(Switch);
  SwitchType.tp_flags = Py_TPFLAGS_DEFAULT;
  SwitchType.tp_doc = "Switch(set_tag_address): on and thread for the TagForwards made with it.";
  SwitchType.tp_new = SwitchNew;
  SwitchType.tp_members = kSwitchMembers;

  TagForwardType.tp_name = "_ccalloc_profiler_ext.TagForward";
  TagForwardType.tp_basicsize = sizeof(TagForward);
  TagForwardType.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC;
  TagForwardType.tp_doc = "TagForward(switch, wrapped, tag): calls wrapped with tag set (see the source).";
  TagForwardType.tp_new = TagForwardNew;
#if PY_VERSION_HEX >= 0x03090000
  TagForwardType.tp_flags |= Py_TPFLAGS_HAVE_VECTORCALL;
  TagForwardType.tp_vectorcall_offset = offsetof(TagForward, vectorcall);
  TagForwardType.tp_call = PyVectorcall_Call;
#else
  TagForwardType.tp_call = TagForwardCall;
#endif
  TagForwardType.tp_getattro = TagForwardGetattr;
  TagForwardType.tp_traverse = TagForwardTraverse;
  TagForwardType.tp_clear = TagForwardClear;
  TagForwardType.tp_dealloc = TagForwardDealloc;
  TagForwardType.tp_methods = kTagForwardMethods;
  TagForwardType.tp_members = kTagForwardMembers;
  TagForwardType.tp_getset = kTagForwardGetset;

  if (PyType_Ready(&SwitchType) < 0 || PyType_Ready(&TagForwardType) < 0) return nullptr;
  kGrad = PyUnicode_InternFromString("grad");
  kDataPtr = PyUnicode_InternFromString("data_ptr");
  if (kGrad == nullptr || kDataPtr == nullptr) return nullptr;
  PyObject* m = PyModule_Create(&kModule);
  if (m == nullptr) return nullptr;
  Py_INCREF(&SwitchType);
  Py_INCREF(&TagForwardType);
  if (PyModule_AddObject(m, "Switch", reinterpret_cast<PyObject*>(&SwitchType)) < 0 ||
      PyModule_AddObject(m, "TagForward", reinterpret_cast<PyObject*>(&TagForwardType)) < 0) {
    Py_DECREF(m);
    return nullptr;
  }
  return m;
}

# The communicator across ranks (tests/dist/, docs/DISTRIBUTED.md): programs run under mpirun
# (--oversubscribe for the 2-core CI machine, --allow-run-as-root for its root user), registered
# only when the MPI communicator was built; otherwise one test that reports itself skipped.
# The single-process tests (communicator_test.cpp) are part of ampkit_tests.
if(NOT AMPKIT_HAVE_MPI)
  add_test(NAME dist_mpi_collectives COMMAND sh -c "echo 'skipped: built without MPI (AMPKIT_MPI)'; exit 77")
  set_tests_properties(dist_mpi_collectives PROPERTIES SKIP_RETURN_CODE 77)
  return()
endif()

set(dist_mpirun ${MPIEXEC_EXECUTABLE} --oversubscribe --allow-run-as-root)
# Sanitized builds: Open MPI's own allocations outlive MPI_Finalize; shared memory without
# ptrace-based single copies, which containers often forbid.
set(dist_env "ASAN_OPTIONS=detect_leaks=0" "OMPI_MCA_btl_vader_single_copy_mechanism=none")

add_executable(ampkit_dist_collectives_test ${CMAKE_CURRENT_LIST_DIR}/collectives_mpi_main.cpp)
target_link_libraries(ampkit_dist_collectives_test PRIVATE ampkit)
add_executable(ampkit_dist_rank_failure_test ${CMAKE_CURRENT_LIST_DIR}/rank_failure_mpi_main.cpp)
target_link_libraries(ampkit_dist_rank_failure_test PRIVATE ampkit)
add_dependencies(ampkit_tests ampkit_dist_collectives_test ampkit_dist_rank_failure_test)

foreach(ranks 2 3)
  add_test(NAME dist_mpi_collectives_${ranks}_ranks
           COMMAND ${dist_mpirun} -np ${ranks} $<TARGET_FILE:ampkit_dist_collectives_test>)
  set_tests_properties(dist_mpi_collectives_${ranks}_ranks PROPERTIES TIMEOUT 120 ENVIRONMENT "${dist_env}"
                       PASS_REGULAR_EXPRESSION "PASSED: ${ranks} ranks" FAIL_REGULAR_EXPRESSION "FAIL")
endforeach()

# A failing rank ends the job with its message (expect_job_failure.sh: non-zero exit within 30 s).
set(dist_fail_regex_throw "rank 1 of 2: load_batch: data file .bad.txt. is not UTF-8")
set(dist_fail_regex_unwind "rank 1 of 2: the MPI communicator was destroyed while an exception unwinds")
set(dist_fail_regex_stall "rank 0 of 2: all_reduce: waited 2 s for rank\\(s\\) 1")
set(dist_fail_regex_kill "rank 1|signal 9|Killed")
foreach(mode throw unwind stall kill)
  add_test(NAME dist_mpi_rank_failure_${mode}
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/expect_job_failure.sh 30 "${dist_fail_regex_${mode}}"
                   ${dist_mpirun} -np 2 $<TARGET_FILE:ampkit_dist_rank_failure_test> ${mode})
  set_tests_properties(dist_mpi_rank_failure_${mode} PROPERTIES TIMEOUT 60
                       ENVIRONMENT "${dist_env};AMPKIT_DIST_TIMEOUT_S=2")
endforeach()

# A program that initialized MPI below MPI_THREAD_SERIALIZED gets a clear refusal, not a race.
add_executable(ampkit_dist_thread_level_test ${CMAKE_CURRENT_LIST_DIR}/thread_level_mpi_main.cpp)
target_link_libraries(ampkit_dist_thread_level_test PRIVATE ampkit MPI::MPI_CXX)
add_dependencies(ampkit_tests ampkit_dist_thread_level_test)
add_test(NAME dist_mpi_thread_level_refused COMMAND ${dist_mpirun} -np 1 $<TARGET_FILE:ampkit_dist_thread_level_test>)
set_tests_properties(dist_mpi_thread_level_refused PROPERTIES TIMEOUT 60 ENVIRONMENT "${dist_env}" SKIP_RETURN_CODE 77)

# Data-parallel training (issue 23; docs/TRAIN.md "Scaling out"), under mpirun with 2 ranks
# (--oversubscribe for the 2-core CI machine, --allow-run-as-root for its root user), registered
# only when the MPI communicator was built (tests/CMakeLists.txt includes this file then; without
# MPI, tests/dist/dist_tests.cmake's skipped test says so):
#   train_data_parallel_trainer: the library trainer over 2 ranks (data_parallel_mpi_main.cpp);
#   train_data_parallel_cli_{failures,runs}: `mpirun -np 2 ampkit train` (data_parallel_cli.sh):
#     failures: one refusal of a bad option, a setup failing on rank 1 only; runs: the trajectory
#     against one process at the same global batch, a checkpoint of 2 ranks resumed on 1 and on 2.
set(dp_mpirun ${MPIEXEC_EXECUTABLE} --oversubscribe --allow-run-as-root)
set(dp_env "ASAN_OPTIONS=detect_leaks=0" "OMPI_MCA_btl_vader_single_copy_mechanism=none" "AMPKIT_DIST_TIMEOUT_S=60")

add_executable(ampkit_train_data_parallel_test ${CMAKE_CURRENT_LIST_DIR}/data_parallel_mpi_main.cpp)
target_link_libraries(ampkit_train_data_parallel_test PRIVATE ampkit)
add_dependencies(ampkit_tests ampkit_train_data_parallel_test)

add_test(NAME train_data_parallel_trainer COMMAND ${dp_mpirun} -np 2 $<TARGET_FILE:ampkit_train_data_parallel_test>)
set_tests_properties(train_data_parallel_trainer PROPERTIES TIMEOUT 120 ENVIRONMENT "${dp_env}"
                     PASS_REGULAR_EXPRESSION "PASSED: 2 ranks" FAIL_REGULAR_EXPRESSION "FAIL")

foreach(part failures runs)
  add_test(NAME train_data_parallel_cli_${part}
           COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/data_parallel_cli.sh "${MPIEXEC_EXECUTABLE}" $<TARGET_FILE:ampkit_cli>
                   ${CMAKE_CURRENT_BINARY_DIR}/data_parallel_cli_${part} ${part})
  set_tests_properties(train_data_parallel_cli_${part} PROPERTIES TIMEOUT 180 ENVIRONMENT "${dp_env}"
                       PASS_REGULAR_EXPRESSION "PASSED" FAIL_REGULAR_EXPRESSION "FAIL")
endforeach()
